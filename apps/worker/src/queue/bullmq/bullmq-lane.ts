import { randomUUID } from 'node:crypto';
import type { JobProgress } from '@flowfleet/protocol';
import { Worker, type Job } from 'bullmq';
import {
  confirmReplicated,
  markWrites,
  NO_REPLICATION_WAIT,
  type RedisClient,
  type ReplicationPolicy,
} from '@flowfleet/redis';
import type { Logger } from 'pino';
import type { LockSettings } from '../../worker-options.js';
import type { HeldJob, JobFailure, LaneConsumer } from '../job-queue.js';
import { bullmqErrorOf, lostJobErrorOf } from './bullmq-job-error.js';
import { LockKeeper } from './lock-keeper.js';

/** What one BullMQ lane is opened with. */
export interface BullmqLaneOptions {
  readonly lane: string;
  /** Shared (maxRetriesPerRequest: null); every command of the lane goes through it. */
  readonly connection: RedisClient;
  readonly bullPrefix: string;
  /** Recorded by BullMQ as a job's `processedBy`; the prefix of every lock token. */
  readonly consumerName: string;
  readonly locks: LockSettings;
  /**
   * Replicas a completion must reach (`WAIT` on `connection`, where BullMQ's moveToCompleted
   * runs) before `complete` resolves; default none (ADR 010).
   */
  readonly replication?: ReplicationPolicy;
  readonly logger: Logger;
}

/**
 * One lane on BullMQ's public API only (its "manually processing jobs" pattern): a Worker that is
 * never `run()`, whose `getNextJob(token, {block: false})` takes a job, whose public
 * `startStalledCheckTimer()` checks the lane for lapsed locks, and whose `extendJobLocks` the lock
 * keeper renews through; a held job settles with `moveToCompleted`, `moveToFailed` (BullMQ applies
 * `attempts`, backoff and `UnrecoverableError`) or `moveToWait` (a hand-back: no attempt used).
 */
export class BullmqLane<R> implements LaneConsumer<R> {
  readonly lane: string;
  readonly #options: BullmqLaneOptions;
  readonly #worker: Worker<unknown, R>;
  readonly #keeper: LockKeeper;
  readonly #held = new Map<string, BullmqHeldJob<R>>();
  readonly #taking = new Set<Promise<unknown>>();
  #closing: Promise<void> | undefined;

  private constructor(options: BullmqLaneOptions, worker: Worker<unknown, R>) {
    this.lane = options.lane;
    this.#options = options;
    this.#worker = worker;
    this.#keeper = new LockKeeper({
      renewer: worker,
      lockDurationMs: options.locks.lockDurationMs,
      lane: options.lane,
      logger: options.logger,
    });
  }

  /** Opens `lane`: its stalled check runs at once, then every `stalledIntervalMs`. */
  static async open<R>(options: BullmqLaneOptions): Promise<BullmqLane<R>> {
    const { lane, logger, locks } = options;
    const worker = new Worker<unknown, R>(lane, null, {
      connection: options.connection,
      prefix: options.bullPrefix,
      name: options.consumerName,
      autorun: false,
      lockDuration: locks.lockDurationMs,
      stalledInterval: locks.stalledIntervalMs,
      maxStalledCount: locks.maxStalledCount,
    });
    worker.on('error', (error) => logger.error({ err: error, lane }, 'lane worker error'));
    worker.on('stalled', (jobId) =>
      logger.warn(
        { jobId, lane },
        'moved a stalled job back to waiting (its worker stopped renewing)',
      ),
    );
    const opened = new BullmqLane<R>(options, worker);
    try {
      await worker.startStalledCheckTimer();
    } catch (error) {
      await opened.close();
      throw error;
    }
    return opened;
  }

  /** The lane's BullMQ event stream (what the lane event waker reads). */
  get eventsKey(): string {
    return this.#worker.keys.events ?? this.#worker.toKey('events');
  }

  take(): Promise<HeldJob<R> | undefined> {
    if (this.#closing !== undefined) return Promise.resolve(undefined);
    const taking = this.#take();
    this.#taking.add(taking);
    void taking.finally(() => this.#taking.delete(taking)).catch(() => undefined);
    return taking;
  }

  async #take(): Promise<HeldJob<R> | undefined> {
    const token = `${this.#options.consumerName}:${randomUUID()}`;
    const job = await this.#worker.getNextJob(token, { block: false });
    if (job === undefined || job.id === undefined) return undefined;
    const held = new BullmqHeldJob(this.lane, job, job.id, token, {
      release: () => this.#release(job.id),
      connection: this.#options.connection,
      replication: this.#options.replication ?? NO_REPLICATION_WAIT,
    });
    this.#held.set(held.id, held);
    this.#keeper.track(held.id, token);
    return held;
  }

  #release(jobId: string | undefined): void {
    if (jobId === undefined) return;
    this.#held.delete(jobId);
    this.#keeper.untrack(jobId);
  }

  /** Hands back whatever is still held (takes in flight included), then closes. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.allSettled([...this.#taking]);
      const handBacks = await Promise.allSettled(
        [...this.#held.values()].map((held) => held.handBack()),
      );
      for (const result of handBacks) {
        if (result.status === 'rejected') {
          this.#options.logger.warn(
            { err: result.reason as unknown, lane: this.lane },
            'could not hand a job back on close; its lock will lapse and it will stall',
          );
        }
      }
      await this.#keeper.close();
      await this.#worker.close();
    })();
    return this.#closing;
  }
}

/** A job this process holds, settled through BullMQ's public Job methods. */
class BullmqHeldJob<R> implements HeldJob<R> {
  readonly lane: string;
  readonly id: string;
  readonly data: unknown;
  readonly progress: unknown;
  readonly attemptsMade: number;
  readonly lockToken: string;
  readonly #job: Job<unknown, R>;
  readonly #token: string;
  readonly #release: () => void;
  readonly #connection: RedisClient;
  readonly #replication: ReplicationPolicy;
  #settled = false;

  constructor(
    lane: string,
    job: Job<unknown, R>,
    id: string,
    token: string,
    settle: {
      readonly release: () => void;
      readonly connection: RedisClient;
      readonly replication: ReplicationPolicy;
    },
  ) {
    this.lane = lane;
    this.id = id;
    this.data = job.data;
    this.progress = job.progress;
    this.attemptsMade = job.attemptsMade;
    this.lockToken = token;
    this.#job = job;
    this.#token = token;
    this.#release = settle.release;
    this.#connection = settle.connection;
    this.#replication = settle.replication;
  }

  reportProgress(progress: JobProgress): Promise<void> {
    if (this.#settled) return Promise.reject(this.#settledError());
    return this.#job.updateProgress(progress);
  }

  /**
   * Moves the job to completed, then (with a replication policy) waits for the replicas to hold
   * it: BullMQ's moveToCompleted runs on the lane's shared connection, where the WAIT goes too.
   * @throws FlowfleetError WORKER_JOB_LOST when the lock lapsed and another attempt took over;
   *   REDIS_NOT_REPLICATED when the completion is on the master only (a failover now would send
   *   the job back through the stalled check to run again)
   */
  async complete(returnValue: R): Promise<void> {
    const mark = markWrites(this.#connection);
    await this.#settle(() => this.#job.moveToCompleted(returnValue, this.#token, false));
    await confirmReplicated(mark, this.#replication);
  }

  fail(failure: JobFailure): Promise<void> {
    return this.#settle(() => this.#job.moveToFailed(bullmqErrorOf(failure), this.#token, false));
  }

  handBack(): Promise<void> {
    return this.#settle(() => this.#job.moveToWait(this.#token));
  }

  async #settle(move: () => Promise<unknown>): Promise<void> {
    if (this.#settled) throw this.#settledError();
    this.#settled = true;
    // Untracked first: a lock renewed every quarter of its duration outlives the move.
    this.#release();
    try {
      await move();
    } catch (error) {
      throw lostJobErrorOf(error, this.id, this.lane);
    }
  }

  #settledError(): Error {
    return new Error(`job ${this.id} of ${this.lane} is no longer held here`);
  }
}
