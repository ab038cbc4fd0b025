import type { Logger } from 'pino';

/**
 * What a pass over a key asks for next: `settled` (nothing more to do until the next trigger),
 * `again` (the state moved: look again at once), `backoff` (something failed or is not there yet:
 * look again after the key's backoff, which doubles per such pass and resets on any other).
 */
export type PassResult = 'settled' | 'again' | 'backoff';

/** How the queue processes keys and how long it backs off. */
export interface WorkQueueOptions<K> {
  /** One pass over `key`; runs alone for its key (other keys run concurrently). */
  process(key: K): Promise<PassResult>;
  /** The first backoff (default 200 ms). */
  readonly baseDelayMs?: number;
  /** The longest backoff (default 5 s). */
  readonly maxDelayMs?: number;
  readonly logger: Logger;
}

interface KeyState {
  running: Promise<void> | undefined;
  /** A trigger arrived while a pass ran: one more pass follows it. */
  dirty: boolean;
  retry: NodeJS.Timeout | undefined;
  failures: number;
  idle: (() => void)[];
}

/**
 * A work queue of keys, the controller pattern of Kubernetes' controller-runtime (ADR 012):
 * triggers only add a key; a key added while it waits or runs is processed once more, never twice
 * at a time; passes are level-triggered (each reads the whole state, so a lost or repeated
 * trigger changes nothing) and one key's passes run one after another while different keys run
 * concurrently; a pass that asks for `backoff` is retried after a per-key delay (rate-limited
 * requeue). A pass that throws is logged and backs off.
 */
export class KeyedWorkQueue<K> {
  readonly #options: WorkQueueOptions<K>;
  readonly #keys = new Map<K, KeyState>();
  #closed = false;

  constructor(options: WorkQueueOptions<K>) {
    this.#options = options;
  }

  /** Queues `key` (at once, even while it backs off). A no-op once closed. */
  add(key: K): void {
    if (this.#closed) return;
    const state = this.#state(key);
    clearTimeout(state.retry);
    state.retry = undefined;
    if (state.running !== undefined) {
      state.dirty = true;
      return;
    }
    state.running = this.#run(key, state);
  }

  /**
   * Resolves once `key` is neither queued nor being processed (a key waiting out a backoff counts
   * as idle: the pass that backed off has ended).
   */
  whenIdle(key: K): Promise<void> {
    const state = this.#keys.get(key);
    if (state?.running === undefined) return Promise.resolve();
    return new Promise((resolve) => state.idle.push(resolve));
  }

  /** Stops queueing, cancels backoffs and waits for the passes in flight. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const state of this.#keys.values()) {
      clearTimeout(state.retry);
      state.retry = undefined;
    }
    await Promise.allSettled([...this.#keys.values()].map((state) => state.running));
  }

  #state(key: K): KeyState {
    let state = this.#keys.get(key);
    if (state === undefined) {
      state = { running: undefined, dirty: false, retry: undefined, failures: 0, idle: [] };
      this.#keys.set(key, state);
    }
    return state;
  }

  async #run(key: K, state: KeyState): Promise<void> {
    let result: PassResult;
    do {
      state.dirty = false;
      try {
        result = await this.#options.process(key);
      } catch (error) {
        this.#options.logger.error({ err: error, key }, 'a reconcile pass failed');
        result = 'backoff';
      }
    } while (!this.#closed && (state.dirty || result === 'again'));
    state.running = undefined;
    if (result === 'backoff' && !this.#closed) {
      const base = this.#options.baseDelayMs ?? 200;
      const delayMs = Math.min(this.#options.maxDelayMs ?? 5_000, base * 2 ** state.failures);
      state.failures += 1;
      state.retry = setTimeout(() => this.add(key), delayMs);
      state.retry.unref();
    } else {
      state.failures = 0;
    }
    for (const resolve of state.idle.splice(0)) resolve();
  }
}
