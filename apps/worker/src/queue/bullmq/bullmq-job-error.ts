import { FlowfleetError } from '@flowfleet/errors';
import { UnrecoverableError, Worker } from 'bullmq';
import { jobFailureOf } from '../../jobs/job-failure.js';
import type { JobFailure } from '../job-queue.js';

/** The error BullMQ's `moveToFailed` is given for `failure` (retried unless unrecoverable). */
export function bullmqErrorOf(failure: JobFailure): Error {
  return failure.retryable ? new Error(failure.message) : new UnrecoverableError(failure.message);
}

/**
 * The error a BullMQ processor would throw for `error`: the envelope JSON as its message, an
 * `UnrecoverableError` for the codes no retry fixes; when the worker is closing (`handBack`),
 * BullMQ's rate-limit error, which moves the job back to waiting without using an attempt. The
 * worker's own adapter settles jobs directly (`bullmqErrorOf`, `job.moveToWait`); this stays
 * exported for processors written against BullMQ.
 */
export function toJobError(error: unknown, handBack: boolean): Error {
  if (handBack) return Worker.RateLimitError();
  return bullmqErrorOf(jobFailureOf(error));
}

/**
 * BullMQ's answers to a move by a consumer that no longer holds the job (its `finishedErrors`
 * codes): the job's key is gone (-1), its lock is gone (-2), it left the active state (-3), or
 * another consumer's token holds the lock (-6).
 */
const LOST_JOB_CODES: ReadonlySet<number> = new Set([-1, -2, -3, -6]);

/**
 * `WORKER_JOB_LOST` when `error` is BullMQ saying this consumer lost job `jobId` (its lock lapsed
 * and another attempt took over), else `error` itself.
 */
export function lostJobErrorOf(error: unknown, jobId: string, lane: string): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'number' || !LOST_JOB_CODES.has(code)) return error;
  return new FlowfleetError(
    'WORKER_JOB_LOST',
    `job ${jobId} is no longer held here (its lock lapsed and another attempt took it over)`,
    { details: { jobId, lane, reason: (error as Error).message }, cause: error },
  );
}
