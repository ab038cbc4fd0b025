import { isFlowfleetError } from '@flowfleet/errors';
import type { RolloutSummary } from '@flowfleet/formats';
import type { LaneSpec } from '@flowfleet/protocol';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { ConcurrencyGate } from './concurrency-gate.js';
import { toJobError } from './job-failure.js';
import type { WorkerKeys } from './keys.js';
import { LaneDispatcher, type FetchableLane } from './lane-dispatcher.js';
import { LaneEventWaker } from './lane-event-waker.js';
import {
  createLaneWorker,
  type LaneJob,
  type LaneProcessor,
  type ManualLaneWorker,
} from './lane-worker.js';
import type { LockSettings } from './worker-options.js';

/** Runs one job of one lane (the RolloutJobRunner). */
export type RunLaneJob = (
  lane: string,
  job: LaneJob,
  signal: AbortSignal | undefined,
) => Promise<RolloutSummary>;

/** What the lane server needs. */
export interface LaneServerOptions {
  /** Shared by the lane workers (BullMQ duplicates it for their blocking connections). */
  readonly redis: Redis;
  /** Dedicated to the waker's XREAD BLOCK. */
  readonly blocking: Redis;
  readonly keys: WorkerKeys;
  readonly workerId: string;
  readonly locks: LockSettings;
  readonly gate: ConcurrencyGate;
  readonly pollIntervalMs: number;
  readonly run: RunLaneJob;
  readonly logger: Logger;
  /** Called when a lane is added or a job starts or settles. */
  readonly onChange: () => void;
}

/** Running jobs get this long to stop at a step boundary once handed back. */
const HAND_BACK_TIMEOUT_MS = 10_000;

/**
 * Serves lanes: one manual BullMQ Worker per lane (locks, stalled checks, completion), one fetch
 * loop over all of them under the process-wide gate, and the event waker that lets the loop
 * sleep while every lane is empty.
 */
export class LaneServer {
  readonly #options: LaneServerOptions;
  readonly #lanes = new Map<
    string,
    { worker: ManualLaneWorker; fetchable: FetchableLane<LaneJob> }
  >();
  readonly #waker: LaneEventWaker;
  readonly #dispatcher: LaneDispatcher<LaneJob>;
  #closing = false;

  constructor(options: LaneServerOptions) {
    this.#options = options;
    this.#waker = new LaneEventWaker({
      blocking: options.blocking,
      control: options.redis,
      logger: options.logger,
    });
    this.#dispatcher = new LaneDispatcher<LaneJob>({
      gate: options.gate,
      lanes: () => [...this.#lanes.values()].map((served) => served.fetchable),
      waitForWork: (ms) => this.#waker.wait(ms),
      wake: () => this.#waker.wake(),
      pollIntervalMs: options.pollIntervalMs,
      tokenPrefix: options.workerId,
      logger: options.logger,
      onLoadChange: options.onChange,
    });
  }

  /** Jobs running now. */
  get activeJobs(): number {
    return this.#dispatcher.activeJobs;
  }

  /** Starts the fetch loop. */
  start(): void {
    this.#dispatcher.start();
  }

  /** Adds a lane: its worker starts renewing locks and checking for stalled jobs. */
  async serve(spec: LaneSpec): Promise<void> {
    if (this.#closing || this.#lanes.has(spec.lane)) return;
    const options = this.#options;
    const worker = createLaneWorker({
      lane: spec.lane,
      connection: options.redis,
      bullPrefix: options.keys.bullPrefix,
      workerId: options.workerId,
      locks: options.locks,
      processor: this.#processorFor(spec.lane),
      logger: options.logger,
    });
    await worker.startManual();
    this.#lanes.set(spec.lane, {
      worker,
      fetchable: {
        lane: spec.lane,
        fetch: async (token) => (await worker.getNextJob(token, { block: false })) ?? undefined,
        process: (job, token, fetchNext) => worker.processJob(job, token, fetchNext),
      },
    });
    await this.#waker.watch(worker.keys.events ?? worker.toKey('events'));
    options.onChange();
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
    for (const { worker } of this.#lanes.values()) worker.cancelAllJobs('worker closing');
    const handedBack = await this.#dispatcher.drain(HAND_BACK_TIMEOUT_MS);
    if (!handedBack) {
      this.#options.logger.error('jobs still running; their locks will lapse and they will stall');
    }
    return handedBack;
  }

  /** Closes every lane worker (`force`: without waiting for BullMQ) and the waker. */
  async close(force: boolean): Promise<void> {
    this.#closing = true;
    this.#waker.close();
    const results = await Promise.allSettled(
      [...this.#lanes.values()].map(({ worker }) => worker.close(force)),
    );
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed.length > 0) throw new AggregateError(failed.map((r) => r.reason as unknown));
  }

  #processorFor(lane: string): LaneProcessor {
    return async (job, _token, signal) => {
      try {
        return await this.#options.run(lane, job, signal);
      } catch (error) {
        const handBack = signal?.aborted === true;
        const log = { jobId: job.id, lane, attempt: job.attemptsMade + 1 };
        const { logger } = this.#options;
        if (handBack) logger.info(log, 'handing a running job back to the queue');
        else if (isFlowfleetError(error)) {
          logger.warn({ ...log, code: error.code, details: error.details }, error.message);
        } else logger.error({ ...log, err: error }, 'a rollout job failed with a defect');
        throw toJobError(error, handBack);
      }
    };
  }
}
