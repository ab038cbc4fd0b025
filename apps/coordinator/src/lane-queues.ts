import { Queue } from 'bullmq';
import type { RedisClient } from '@flowfleet/redis';
import type { Logger } from 'pino';

/** BullMQ job counts the coordinator reports per lane. */
export interface LaneCounts {
  readonly waiting: number;
  readonly delayed: number;
  readonly prioritized: number;
  readonly active: number;
  readonly completed: number;
  readonly failed: number;
}

/** The job states counted per lane (BullMQ's names). */
export const COUNTED_STATES = [
  'waiting',
  'delayed',
  'prioritized',
  'active',
  'completed',
  'failed',
] as const;

/**
 * One BullMQ Queue per lane, created on first use over the coordinator's shared connection (a
 * Queue's constructor starts I/O, so none is built before `start()`). Each lane's queue has its
 * own key prefix (`laneBullPrefix`, the lane's hash tag), so on a Redis Cluster lanes spread over
 * shards.
 */
export class LaneQueues {
  readonly #queues = new Map<string, Queue>();
  readonly #connection: RedisClient;
  readonly #prefixOf: (lane: string) => string;
  readonly #logger: Logger;
  readonly #eventsMaxLen: number;
  #closed = false;

  /** `eventsMaxLen`: the cap of each lane's BullMQ event stream (BullMQ trims it to about this). */
  constructor(
    connection: RedisClient,
    prefixOf: (lane: string) => string,
    logger: Logger,
    eventsMaxLen = 10_000,
  ) {
    this.#connection = connection;
    this.#prefixOf = prefixOf;
    this.#logger = logger;
    this.#eventsMaxLen = eventsMaxLen;
  }

  /** The queue of `lane` (created on first use). */
  get(lane: string): Queue {
    if (this.#closed) throw new Error('LaneQueues is closed');
    let queue = this.#queues.get(lane);
    if (queue === undefined) {
      queue = new Queue(lane, {
        connection: this.#connection,
        prefix: this.#prefixOf(lane),
        // Written to the lane's meta key, where BullMQ's scripts (workers' too) read the cap.
        streams: { events: { maxLen: this.#eventsMaxLen } },
      });
      queue.on('error', (error) => this.#logger.error({ err: error, lane }, 'lane queue error'));
      this.#queues.set(lane, queue);
    }
    return queue;
  }

  /**
   * True while `token` is the lock of job `id` on `lane`: the job is active and the attempt that
   * took it with this token still holds it (a lapsed, handed-back or settled job has no lock, a
   * job taken over by another attempt has that attempt's). BullMQ keeps a held job's lock token
   * at `<job key>:lock` (its moveToActive and extendLock scripts); this is the one read of it.
   */
  async isHeldBy(lane: string, id: string, token: string): Promise<boolean> {
    const lock = await this.#connection.get(`${this.get(lane).toKey(id)}:lock`);
    return lock !== null && lock === token;
  }

  /** Job counts of `lane` by state. */
  async counts(lane: string): Promise<LaneCounts> {
    const counts = await this.get(lane).getJobCounts(...COUNTED_STATES);
    return {
      waiting: counts['waiting'] ?? 0,
      delayed: counts['delayed'] ?? 0,
      prioritized: counts['prioritized'] ?? 0,
      active: counts['active'] ?? 0,
      completed: counts['completed'] ?? 0,
      failed: counts['failed'] ?? 0,
    };
  }

  /** Closes every queue (the shared connection stays open: its owner quits it). Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const results = await Promise.allSettled([...this.#queues.values()].map((q) => q.close()));
    this.#queues.clear();
    for (const result of results) {
      if (result.status === 'rejected') {
        this.#logger.error({ err: result.reason }, 'closing a lane queue failed');
      }
    }
  }
}
