import { groupBySlot, isCluster, type RedisClient } from '@flowfleet/redis';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** How long one blocking read waits, at most: also how soon a newly watched lane is read. */
const BLOCK_MS = 100;
/** Entries taken per lane and read. */
const READ_COUNT = 256;
/** On a cluster: the pause between rounds of non-blocking reads that found nothing. */
const CLUSTER_POLL_MS = 50;

type StreamReply = [string, [string, string[]][]][];

/** One waiter's hold on a job's events. */
export interface JobWatch {
  /**
   * Settles true at the next event of the job not yet consumed (events since the watch began
   * count), false when `timeoutMs` passes or the watch ends (cancelled, or the hub closed): then
   * stop waiting.
   */
  changed(timeoutMs: number): Promise<boolean>;
  /** Stops watching (idempotent); a pending `changed` settles false. */
  cancel(): void;
}

interface Waiter {
  wake(): void;
  end(): void;
}

interface WatchedStream {
  /** The id after which events are read (set when the first waiter arrived). */
  lastId: string;
  readonly waiters: Map<string, Set<Waiter>>;
}

/**
 * Wakes requests that wait for a job to change (`GET /v1/rollouts/:id?waitMs=…`) from BullMQ's
 * per-lane event streams (`<prefix>:<lane>:events`): one connection of its own blocks on every
 * stream that has a waiter (XREAD), so a long-polling trainer costs the coordinator one read per
 * event, not one status read per poll. A watch records the stream's position before the caller
 * reads the job's status, so an event between that read and the wait is never missed.
 *
 * On a Redis Cluster each lane's stream is in its lane's own slot, and one XREAD may not span
 * slots: the hub then reads each slot's streams without blocking, all slots at once over the
 * shared connection, and pauses CLUSTER_POLL_MS between rounds that found nothing.
 */
export class JobEvents {
  readonly #connection: RedisClient;
  readonly #logger: Logger;
  readonly #streams = new Map<string, WatchedStream>();
  #reader: Redis | undefined;
  #loop: Promise<void> | undefined;
  #closed = false;

  /** `connection` is duplicated on first use for the blocking reads. */
  constructor(connection: RedisClient, logger: Logger) {
    this.#connection = connection;
    this.#logger = logger;
  }

  /**
   * Starts watching job `jobId` on the event stream `streamKey`: events after this call wake it.
   * @throws whatever Redis throws while reading the stream's position
   */
  async watch(streamKey: string, jobId: string): Promise<JobWatch> {
    if (this.#closed) return { changed: () => Promise.resolve(false), cancel: () => {} };
    let stream = this.#streams.get(streamKey);
    if (stream === undefined) {
      const [last] = (await this.#connection.xrevrange(streamKey, '+', '-', 'COUNT', 1)) ?? [];
      // Another watch may have started the stream while this one read its position.
      stream = this.#streams.get(streamKey) ?? { lastId: last?.[0] ?? '0-0', waiters: new Map() };
      this.#streams.set(streamKey, stream);
    }
    const watched = stream;
    // Events since the last `changed()` (or the watch's start) that no call has consumed yet.
    let pending = false;
    let settle: ((changed: boolean) => void) | undefined;
    let cancelled = false;
    const waiter: Waiter = {
      wake: () => {
        pending = true;
        settle?.(true);
      },
      end: () => {
        cancelled = true;
        settle?.(false);
      },
    };
    const forJob = watched.waiters.get(jobId) ?? new Set<Waiter>();
    forJob.add(waiter);
    watched.waiters.set(jobId, forJob);
    this.#ensureLoop();
    return {
      changed: (timeoutMs) =>
        new Promise<boolean>((resolve) => {
          if (cancelled) return resolve(false);
          if (pending) {
            pending = false;
            return resolve(true);
          }
          const timer = setTimeout(() => finish(false), timeoutMs);
          const finish = (changed: boolean): void => {
            clearTimeout(timer);
            settle = undefined;
            if (changed) pending = false;
            resolve(changed);
          };
          settle = finish;
        }),
      cancel: () => {
        if (cancelled) return;
        cancelled = true;
        forJob.delete(waiter);
        if (forJob.size === 0) watched.waiters.delete(jobId);
        if (watched.waiters.size === 0 && this.#streams.get(streamKey) === watched) {
          this.#streams.delete(streamKey);
        }
        settle?.(false);
      },
    };
  }

  /** Stops the reader (idempotent); waits for its last read. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const stream of this.#streams.values()) {
      for (const waiters of stream.waiters.values()) for (const w of waiters) w.end();
    }
    this.#streams.clear();
    this.#reader?.disconnect();
    await this.#loop;
  }

  #ensureLoop(): void {
    if (this.#loop !== undefined || this.#closed) return;
    this.#loop = this.#run().finally(() => {
      this.#loop = undefined;
      // A watch that arrived while the last read was ending found the loop still set.
      if (this.#streams.size > 0) this.#ensureLoop();
    });
  }

  async #run(): Promise<void> {
    const connection = this.#connection;
    if (isCluster(connection)) return this.#pollSlots(connection);
    const reader = (this.#reader ??= this.#openReader(connection));
    while (!this.#closed && this.#streams.size > 0) {
      const keys = [...this.#streams.keys()];
      const ids = keys.map((key) => this.#streams.get(key)!.lastId);
      try {
        this.#consume(
          (await reader.xread(
            'COUNT',
            READ_COUNT,
            'BLOCK',
            BLOCK_MS,
            'STREAMS',
            ...keys,
            ...ids,
          )) as StreamReply | null,
        );
      } catch (error) {
        if (this.#closed) return;
        await this.#readFailed(error);
      }
    }
  }

  #openReader(connection: Redis): Redis {
    const reader = connection.duplicate({ connectionName: 'flowfleet-coordinator:events' });
    reader.on('error', (error) =>
      this.#logger.debug({ err: error }, 'job events connection error'),
    );
    return reader;
  }

  /** The cluster form of the loop: one non-blocking XREAD per slot, every slot at once. */
  async #pollSlots(connection: RedisClient): Promise<void> {
    while (!this.#closed && this.#streams.size > 0) {
      const groups = groupBySlot([...this.#streams.keys()]);
      try {
        const replies = await Promise.all(
          groups.map(
            (keys) =>
              connection.xread(
                'COUNT',
                READ_COUNT,
                'STREAMS',
                ...keys,
                ...keys.map((key) => this.#streams.get(key)?.lastId ?? '$'),
              ) as Promise<StreamReply | null>,
          ),
        );
        let read = 0;
        for (const reply of replies) read += this.#consume(reply);
        if (read === 0) await new Promise((resolve) => setTimeout(resolve, CLUSTER_POLL_MS));
      } catch (error) {
        if (this.#closed) return;
        await this.#readFailed(error);
      }
    }
  }

  /** Waiters still time out on their own; the next read retries the streams. */
  async #readFailed(error: unknown): Promise<void> {
    this.#logger.warn({ err: error }, 'reading the lanes’ job events failed');
    await new Promise((resolve) => setTimeout(resolve, BLOCK_MS));
  }

  /** Wakes the waiters of every job an entry names; returns the number of entries read. */
  #consume(replies: StreamReply | null): number {
    let read = 0;
    for (const [key, entries] of replies ?? []) {
      const stream = this.#streams.get(key);
      if (stream === undefined) continue;
      for (const [id, fields] of entries) {
        read += 1;
        stream.lastId = id;
        const jobId = fieldOf(fields, 'jobId');
        const waiters = jobId === undefined ? undefined : stream.waiters.get(jobId);
        if (waiters !== undefined) for (const waiter of waiters) waiter.wake();
      }
    }
    return read;
  }
}

function fieldOf(fields: readonly string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}
