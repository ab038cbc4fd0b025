import type { RedisClient, ReplicationPolicy } from '@flowfleet/redis';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { LockSettings } from '../../worker-options.js';
import type { JobQueue, LaneConsumer } from '../job-queue.js';
import { BullmqLane } from './bullmq-lane.js';
import { LaneEventWaker } from './lane-event-waker.js';
import { PollingSignal, type WorkSignal } from './work-signal.js';

/** What the BullMQ job queue is built from. */
export interface BullmqJobQueueOptions {
  /** Shared by every lane (maxRetriesPerRequest: null); the queue never closes it. */
  readonly connection: RedisClient;
  /**
   * Dedicated to the lane event waker's `XREAD BLOCK`, which wakes an idle worker as soon as a
   * job is added; without it, `waitForWork` polls. The queue never closes it.
   */
  readonly events?: Redis;
  /** BullMQ's key prefix of a lane (the fleet's `laneBullPrefix`: each lane its own hash tag). */
  readonly bullPrefix: (lane: string) => string;
  /** Recorded as each job's `processedBy` (the worker id). */
  readonly consumerName: string;
  readonly locks: LockSettings;
  /** Replicas a completion must reach before `complete` resolves (default none; ADR 010). */
  readonly replication?: ReplicationPolicy;
  readonly logger: Logger;
}

/**
 * The worker's job queue on BullMQ (public API only): one `BullmqLane` per opened lane.
 * Builds nothing and does no I/O until a lane is opened.
 */
export function createBullmqJobQueue<R>(options: BullmqJobQueueOptions): JobQueue<R> {
  return new BullmqJobQueue<R>(options);
}

class BullmqJobQueue<R> implements JobQueue<R> {
  readonly #options: BullmqJobQueueOptions;
  readonly #signal: WorkSignal;
  readonly #opening = new Map<string, Promise<BullmqLane<R>>>();
  #closing: Promise<void> | undefined;

  constructor(options: BullmqJobQueueOptions) {
    this.#options = options;
    this.#signal =
      options.events === undefined
        ? new PollingSignal()
        : new LaneEventWaker({
            blocking: options.events,
            control: options.connection,
            logger: options.logger,
          });
  }

  openLane(lane: string): Promise<LaneConsumer<R>> {
    if (this.#closing !== undefined) {
      return Promise.reject(new Error(`the job queue is closed: cannot open ${lane}`));
    }
    let opening = this.#opening.get(lane);
    if (opening === undefined) {
      opening = this.#open(lane);
      this.#opening.set(lane, opening);
      // A lane that failed to open may be opened again (the lane watcher retries on rescan).
      opening.catch(() => this.#opening.delete(lane));
    }
    return opening;
  }

  async #open(lane: string): Promise<BullmqLane<R>> {
    const { connection, bullPrefix, consumerName, locks, logger, replication } = this.#options;
    const opened = await BullmqLane.open<R>({
      lane,
      connection,
      bullPrefix: bullPrefix(lane),
      consumerName,
      locks,
      ...(replication === undefined ? {} : { replication }),
      logger,
    });
    try {
      await this.#signal.watch(opened.eventsKey);
    } catch (error) {
      await opened.close();
      throw error;
    }
    return opened;
  }

  waitForWork(timeoutMs: number): Promise<void> {
    return this.#signal.wait(timeoutMs);
  }

  wake(): void {
    this.#signal.wake();
  }

  wakeFor(lane: string): void {
    if (this.#opening.has(lane)) this.#signal.wake();
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#signal.close();
      const opened = await Promise.allSettled([...this.#opening.values()]);
      const closed = await Promise.allSettled(
        opened.flatMap((result) => (result.status === 'fulfilled' ? [result.value.close()] : [])),
      );
      const failed = closed.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed.length > 0) throw new AggregateError(failed.map((r) => r.reason as unknown));
    })();
    return this.#closing;
  }
}
