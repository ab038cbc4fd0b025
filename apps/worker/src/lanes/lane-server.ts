import { isFlowfleetError } from '@flowfleet/errors';
import type { RolloutSummary } from '@flowfleet/formats';
import type { LaneSpec } from '@flowfleet/protocol';
import type { Logger } from 'pino';
import { jobFailureOf } from '../jobs/job-failure.js';
import type { HeldJob, JobQueue } from '../queue/job-queue.js';
import type { ConcurrencyGate } from './concurrency-gate.js';
import { LaneDispatcher, type FetchableLane } from './lane-dispatcher.js';

/** A rollout job as the lane server holds it. */
export type LaneJob = HeldJob<RolloutSummary>;

/** Runs one job of one lane (the RolloutJobRunner); `signal` aborts when it is handed back. */
export type RunLaneJob = (
  lane: string,
  job: LaneJob,
  signal: AbortSignal,
  /** Called once the job's compute is over (only its result is left to store). */
  computed: () => void,
) => Promise<RolloutSummary>;

/** What the lane server needs. */
export interface LaneServerOptions {
  readonly queue: JobQueue<RolloutSummary>;
  readonly gate: ConcurrencyGate;
  readonly pollIntervalMs: number;
  readonly run: RunLaneJob;
  readonly logger: Logger;
}

/** Running jobs get this long to stop at a step boundary once handed back. */
const HAND_BACK_TIMEOUT_MS = 10_000;

/**
 * Serves lanes: one fetch loop over every lane of the job queue it serves, under the process-wide
 * gate; each job taken runs through `run` and is settled from its outcome (completed, failed with
 * its error envelope, or handed back when the worker closes while it runs).
 */
export class LaneServer {
  readonly #options: LaneServerOptions;
  readonly #lanes = new Map<string, FetchableLane<LaneJob>>();
  readonly #running = new Set<AbortController>();
  readonly #listeners: (() => void)[] = [];
  readonly #dispatcher: LaneDispatcher<LaneJob>;
  #closing = false;

  constructor(options: LaneServerOptions) {
    this.#options = options;
    const { queue } = options;
    this.#dispatcher = new LaneDispatcher<LaneJob>({
      gate: options.gate,
      lanes: () => [...this.#lanes.values()],
      waitForWork: (ms) => queue.waitForWork(ms),
      wake: () => queue.wake(),
      pollIntervalMs: options.pollIntervalMs,
      logger: options.logger,
      onLoadChange: () => this.#changed(),
    });
  }

  /** Jobs running now. */
  get activeJobs(): number {
    return this.#dispatcher.activeJobs;
  }

  /** Calls `listener` when a lane is added or a job starts or settles. */
  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  /** Starts the fetch loop. */
  start(): void {
    this.#dispatcher.start();
  }

  /** Adds a lane: the queue starts checking it for stalled jobs, and the loop fetches from it. */
  async serve(spec: LaneSpec): Promise<void> {
    if (this.#closing || this.#lanes.has(spec.lane)) return;
    const consumer = await this.#options.queue.openLane(spec.lane);
    this.#lanes.set(spec.lane, {
      lane: spec.lane,
      fetch: () => consumer.take(),
      process: (job, computed) => this.#process(job, computed),
    });
    // The queue woke the loop when it opened the lane, possibly before the lane was fetchable
    // here: wake it again now that it is, so a job already waiting does not wait for the poll.
    this.#options.queue.wake();
    this.#changed();
  }

  /** Stops fetching (running jobs go on). */
  stopFetching(): Promise<void> {
    this.#closing = true;
    return this.#dispatcher.stop();
  }

  /**
   * Waits up to `timeoutMs` for running jobs; then hands the rest back to the queue (their
   * rollouts stop at the next step boundary). True when nothing is left running.
   */
  async drain(timeoutMs: number): Promise<boolean> {
    if (await this.#dispatcher.drain(timeoutMs)) return true;
    this.#options.logger.warn('drain bound passed: handing running jobs back to the queue');
    for (const running of this.#running) running.abort(new Error('worker closing'));
    const handedBack = await this.#dispatcher.drain(HAND_BACK_TIMEOUT_MS);
    if (!handedBack) {
      this.#options.logger.error('jobs still running; closing the job queue hands them back');
    }
    return handedBack;
  }

  async #process(job: LaneJob, computed: () => void): Promise<void> {
    const log = { jobId: job.id, lane: job.lane, attempt: job.attemptsMade + 1 };
    try {
      await this.#runAndSettle(job, computed, log);
    } catch (error) {
      // Cut off for longer than the lock: another attempt has the job; ours is dropped and
      // this worker goes on serving (what it stored stood only if it was identical). Or the
      // completion is on the Redis master only (REDIS_NOT_REPLICATED): should a failover lose
      // it, the job stalls and runs again (at least once, same bytes); this worker goes on.
      if (
        !isFlowfleetError(error, 'WORKER_JOB_LOST') &&
        !isFlowfleetError(error, 'REDIS_NOT_REPLICATED')
      )
        throw error;
      this.#options.logger.warn(
        { ...log, code: error.code, details: error.details },
        error.message,
      );
    }
  }

  async #runAndSettle(
    job: LaneJob,
    computed: () => void,
    log: Record<string, unknown>,
  ): Promise<void> {
    const { logger, run } = this.#options;
    const running = new AbortController();
    this.#running.add(running);
    try {
      let summary: RolloutSummary;
      try {
        summary = await run(job.lane, job, running.signal, computed);
      } catch (error) {
        if (running.signal.aborted) {
          logger.info(log, 'handing a running job back to the queue');
          await job.handBack();
        } else {
          if (isFlowfleetError(error)) {
            logger.warn({ ...log, code: error.code, details: error.details }, error.message);
          } else logger.error({ ...log, err: error }, 'a rollout job failed with a defect');
          await job.fail(jobFailureOf(error));
        }
        return;
      }
      await job.complete(summary);
    } finally {
      this.#running.delete(running);
    }
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }
}
