/** How the BullMQ job queue waits for work: `JobQueue.waitForWork`/`wake`, plus lanes to watch. */
export interface WorkSignal {
  /** Starts watching a lane's BullMQ event stream (a signal that does not listen ignores it). */
  watch(eventsKey: string): Promise<void>;
  wait(timeoutMs: number): Promise<void>;
  wake(): void;
  close(): void;
}

/**
 * The signal that listens to nothing: `wait` sleeps until `wake()` or its timeout, so an idle
 * worker notices a new job within one poll interval.
 */
export class PollingSignal implements WorkSignal {
  #pending = false;
  #closed = false;
  #wakeSleeper: (() => void) | undefined;

  watch(): Promise<void> {
    this.wake();
    return Promise.resolve();
  }

  wait(timeoutMs: number): Promise<void> {
    if (this.#pending || this.#closed) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#wakeSleeper = undefined;
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.#wakeSleeper = done;
    });
  }

  wake(): void {
    if (this.#wakeSleeper === undefined) this.#pending = true;
    else this.#wakeSleeper();
  }

  close(): void {
    this.#closed = true;
    this.wake();
  }
}
