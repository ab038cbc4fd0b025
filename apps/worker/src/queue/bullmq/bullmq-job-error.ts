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
