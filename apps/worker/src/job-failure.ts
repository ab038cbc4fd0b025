import { errorEnvelopeOf, isFlowfleetError, type ErrorCode } from '@flowfleet/protocol';
import { UnrecoverableError, Worker } from 'bullmq';

/**
 * Codes no retry can fix: the payload itself is bad, the job cannot run here by construction, or
 * a different result is already stored. BullMQ fails these at once, whatever `attempts` says.
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
]);

/** True when a failure with this error must not be retried. */
export function isUnrecoverable(error: unknown): boolean {
  return isFlowfleetError(error) && UNRECOVERABLE_CODES.has(error.code);
}

/**
 * The error a processor throws to BullMQ for `error`. Its message is the error envelope JSON
 * `{code, message, details}` (BullMQ keeps it as `failedReason`, which the coordinator reports);
 * a defect becomes `INTERNAL_ERROR` with its message withheld (the caller logs the stack). When
 * the worker is closing (`handBack`), it is BullMQ's rate-limit error, which moves the job back
 * to waiting without counting an attempt, so another worker starts it at once.
 */
export function toJobError(error: unknown, handBack: boolean): Error {
  if (handBack) return Worker.RateLimitError();
  const message = JSON.stringify(errorEnvelopeOf(error).body);
  return isUnrecoverable(error) ? new UnrecoverableError(message) : new Error(message);
}
