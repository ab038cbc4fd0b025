import type { RolloutSummary } from '@flowfleet/formats';
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { LockSettings } from './worker-options.js';

/** A rollout job as BullMQ hands it over: the payload is untrusted until validated. */
export type LaneJob = Job<unknown, RolloutSummary>;

/** The processor of one lane: `signal` aborts when the worker hands the job back on close. */
export type LaneProcessor = (
  job: LaneJob,
  token: string | undefined,
  signal: AbortSignal | undefined,
) => Promise<RolloutSummary>;

/**
 * A BullMQ Worker driven by hand (BullMQ's "manually fetching jobs" pattern): the worker's own
 * dispatcher fetches with `getNextJob(token, {block: false})` only when the process-wide gate has
 * a free slot, and runs each job through BullMQ's `processJob` — which tracks the lock for
 * renewal, calls the processor, and moves the job to completed/failed (retries, backoff,
 * `UnrecoverableError`) without fetching the next one. BullMQ's own main loop never runs.
 */
export class ManualLaneWorker extends Worker<unknown, RolloutSummary> {
  /** Starts lock renewal and the stalled-job checker (what `run()` would start). */
  async startManual(): Promise<void> {
    this.lockManager.start();
    await this.startStalledCheckTimer();
  }
}

/** What a lane worker is built from. */
export interface LaneWorkerOptions {
  readonly lane: string;
  /** A shared connection (maxRetriesPerRequest: null); BullMQ duplicates it for blocking calls. */
  readonly connection: Redis;
  readonly bullPrefix: string;
  /** Recorded by BullMQ as the job's `processedBy`. */
  readonly workerId: string;
  readonly locks: LockSettings;
  readonly processor: LaneProcessor;
  readonly logger: Logger;
}

/** Builds the manual BullMQ Worker of one lane, with its events logged. */
export function createLaneWorker(options: LaneWorkerOptions): ManualLaneWorker {
  const { lane, logger, locks } = options;
  const worker = new ManualLaneWorker(lane, options.processor, {
    connection: options.connection,
    prefix: options.bullPrefix,
    name: options.workerId,
    autorun: false,
    concurrency: 1,
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
  worker.on('lockRenewalFailed', (jobIds) =>
    logger.warn({ jobIds, lane }, 'could not renew job locks'),
  );
  return worker;
}
