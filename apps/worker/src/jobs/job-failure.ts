import { isFlowfleetError, type ErrorCode } from '@flowfleet/errors';
import { errorEnvelopeOf } from '@flowfleet/protocol';
import type { JobFailure } from '../queue/job-queue.js';

/**
 * Codes no retry can fix: the payload itself is bad, the job cannot run here by construction, or
 * a different result is already stored. The job fails at once, whatever `attempts` says.
 */
const UNRECOVERABLE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'PROTO_INVALID_JOB',
  'PROTO_INVALID_REQUEST',
  'WORKER_JOB_UNSERVABLE',
  'WORKER_RESULT_CONFLICT',
  'MODEL_INVALID_REQUEST',
  'RT_INTERCEPTOR_CONFLICT',
  'RT_UNKNOWN_LOOP',
  'MODEL_UNKNOWN_CARD',
  'WORKER_EMBEDS_INVALID',
]);

/** True when a failure with this error must not be retried. */
export function isUnrecoverable(error: unknown): boolean {
  return isFlowfleetError(error) && UNRECOVERABLE_CODES.has(error.code);
}

/**
 * How a job fails with `error`: its reason is the error envelope JSON `{code, message, details}`
 * (the coordinator reports it as the job's error); a defect becomes `INTERNAL_ERROR` with its
 * message withheld (the caller logs the stack).
 */
export function jobFailureOf(error: unknown): JobFailure {
  return {
    message: JSON.stringify(errorEnvelopeOf(error).body),
    retryable: !isUnrecoverable(error),
  };
}
