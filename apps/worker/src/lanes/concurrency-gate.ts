/**
 * The process-wide limit on concurrent rollouts across every lane (BullMQ's own `concurrency` is
 * per Worker, i.e. per lane). A slot is taken before a job is fetched and given back when it
 * settles, so the worker never holds a locked job it cannot start.
 */
export class ConcurrencyGate {
  readonly limit: number;
  #active = 0;
  #highWater = 0;
  #waiters: (() => void)[] = [];

  constructor(limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new RangeError(`a concurrency limit is an integer ≥ 1, got ${limit}`);
    }
    this.limit = limit;
  }

  /** Slots taken now. */
  get active(): number {
    return this.#active;
  }

  /** The most slots ever taken at once. */
  get highWater(): number {
    return this.#highWater;
  }

  /** Takes a slot when one is free. */
  tryAcquire(): boolean {
    if (this.#active >= this.limit) return false;
    this.#active++;
    this.#highWater = Math.max(this.#highWater, this.#active);
    return true;
  }

  /** Gives a slot back and wakes whoever waits for one. */
  release(): void {
    if (this.#active === 0) throw new Error('ConcurrencyGate.release() without a slot taken');
    this.#active--;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }

  /** Resolves once a slot is free (at once when one is). */
  whenAvailable(): Promise<void> {
    if (this.#active < this.limit) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Wakes every waiter without a slot being free (used on close). */
  interrupt(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}
