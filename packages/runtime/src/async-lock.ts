/** A FIFO mutex: one holder at a time (a static workspace serves one replay at a time). */
export class AsyncLock {
  #tail: Promise<void> = Promise.resolve();
  #held = false;

  /** True while a holder runs. */
  get held(): boolean {
    return this.#held;
  }

  /** Runs `fn` once every earlier holder has finished; failures do not poison the lock. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const previous = this.#tail;
    let release!: () => void;
    this.#tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    await previous;
    this.#held = true;
    try {
      return await fn();
    } finally {
      this.#held = false;
      release();
    }
  }
}
