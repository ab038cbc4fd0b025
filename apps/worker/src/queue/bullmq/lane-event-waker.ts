import type { RedisClient } from '@flowfleet/redis';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { WorkSignal } from './work-signal.js';

/** Queue events that mean "a job may be waiting now". */
const WAKING_EVENTS = new Set(['added', 'waiting', 'stalled', 'resumed', 'priority']);
const READ_COUNT = 200;
const UNBLOCK_TRIES = 20;
const UNBLOCK_RETRY_MS = 5;
const ERROR_PAUSE_MS = 250;

/** What the waker needs. */
export interface LaneEventWakerOptions {
  /** A dedicated connection to one server (standalone only): XREAD BLOCK holds it. */
  readonly blocking: Redis;
  /** Any other connection to the same server, for CLIENT UNBLOCK and reading a stream's last id. */
  readonly control: RedisClient;
  readonly logger: Logger;
}

/**
 * Lets the idle dispatcher sleep until a lane has work, without polling every lane: one
 * `XREAD BLOCK` over the BullMQ event streams of every served lane, on one server (standalone
 * mode only: on a Redis Cluster each lane has its own slot, and the queue polls instead). `added`/`waiting`/`stalled` events wake it; a `delayed`
 * event (a retry with backoff) schedules a wake-up for when it is due. `wake()` interrupts a
 * blocked read with `CLIENT UNBLOCK` (a new lane, a freed slot, close).
 *
 * Optional: a BullMQ job queue built without an `events` connection polls instead
 * (`PollingSignal`), and an idle worker then notices a new job within one poll interval. Dropping
 * the waker is deleting this file and its one use in `bullmq-job-queue.ts`.
 */
export class LaneEventWaker implements WorkSignal {
  readonly #options: LaneEventWakerOptions;
  readonly #lastIds = new Map<string, string>();
  #clientId: number | undefined;
  #pending = false;
  #waiting = false;
  #closed = false;
  #dueAt = Number.POSITIVE_INFINITY;
  #wakeSleep: (() => void) | undefined;

  constructor(options: LaneEventWakerOptions) {
    this.#options = options;
    // A reconnected connection has a new client id: read it again before the next XREAD.
    options.blocking.on('ready', () => (this.#clientId = undefined));
  }

  /** Watches one lane's event stream from its current end (earlier jobs are fetched directly). */
  async watch(eventsKey: string): Promise<void> {
    if (this.#lastIds.has(eventsKey)) return;
    const last = (await this.#options.control.xrevrange(eventsKey, '+', '-', 'COUNT', 1))[0];
    this.#lastIds.set(eventsKey, last?.[0] ?? '0-0');
    this.wake();
  }

  /** Makes the current (or next) `wait` return at once. */
  wake(): void {
    this.#pending = true;
    this.#wakeSleep?.();
    if (this.#waiting) void this.#unblock();
  }

  /**
   * Resolves when a watched lane may have a job, `wake()` is called, a delayed job falls due, or
   * `timeoutMs` passes (the fallback poll).
   */
  async wait(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.#closed) {
      if (this.#pending) {
        this.#pending = false;
        return;
      }
      const now = Date.now();
      if (this.#dueAt <= now) {
        this.#dueAt = Number.POSITIVE_INFINITY;
        return;
      }
      const remaining = Math.min(deadline, this.#dueAt) - now;
      if (remaining <= 0) return;
      if (this.#lastIds.size === 0) {
        await this.#sleep(remaining);
        continue;
      }
      let reply: unknown;
      try {
        reply = await this.#read(Math.ceil(remaining));
      } catch (error) {
        if (this.#closed) return;
        this.#options.logger.debug({ err: error }, 'waiting for lane events failed');
        await this.#sleep(Math.min(remaining, ERROR_PAUSE_MS));
        return;
      }
      if (this.#consume(reply)) return;
    }
  }

  /** Stops waiting for good; the blocking connection is its owner's to close. */
  close(): void {
    this.#closed = true;
    this.wake();
  }

  async #read(blockMs: number): Promise<unknown> {
    const { blocking } = this.#options;
    this.#clientId ??= Number(await blocking.call('CLIENT', 'ID'));
    const keys = [...this.#lastIds.keys()];
    const ids = keys.map((key) => this.#lastIds.get(key) ?? '0-0');
    this.#waiting = true;
    try {
      if (this.#pending || this.#closed) return null;
      // The typed method normalises the reply to [[key, [[id, fields]]]] under RESP3 too.
      return await blocking.xread(
        'COUNT',
        READ_COUNT,
        'BLOCK',
        blockMs,
        'STREAMS',
        ...keys,
        ...ids,
      );
    } finally {
      this.#waiting = false;
    }
  }

  /** Records the ids read; true when an event means work may be waiting. */
  #consume(reply: unknown): boolean {
    if (!Array.isArray(reply)) return false;
    let waking = false;
    for (const stream of reply as [string, [string, string[]][]][]) {
      const [key, entries] = stream;
      for (const [id, fields] of entries) {
        this.#lastIds.set(key, id);
        const event = fieldOf(fields, 'event');
        if (event !== undefined && WAKING_EVENTS.has(event)) waking = true;
        if (event === 'delayed') {
          const due = Number(fieldOf(fields, 'delay'));
          if (Number.isFinite(due)) this.#dueAt = Math.min(this.#dueAt, due);
        }
      }
    }
    return waking;
  }

  async #unblock(): Promise<void> {
    const id = this.#clientId;
    if (id === undefined) return;
    for (let i = 0; i < UNBLOCK_TRIES && this.#waiting; i++) {
      try {
        const unblocked = Number(await this.#options.control.call('CLIENT', 'UNBLOCK', id));
        if (unblocked === 1) return;
      } catch {
        return;
      }
      // The XREAD may not have reached Redis yet: try again shortly.
      await new Promise((resolve) => setTimeout(resolve, UNBLOCK_RETRY_MS));
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.#wakeSleep = () => {
        this.#wakeSleep = undefined;
        done();
      };
    });
  }
}

function fieldOf(fields: readonly string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === name) return fields[i + 1];
  }
  return undefined;
}
