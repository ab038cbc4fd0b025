import { FlowfleetError, type ErrorEnvelope } from '@flowfleet/errors';
import { z } from 'zod';

/**
 * The wire error envelope `{code, message, details}`. `code` is any well-formed code rather than
 * the closed set, so a client can read errors from a newer coordinator.
 */
export const ErrorEnvelopeSchema = z.object({
  code: z.string().regex(/^[A-Z]+_[A-Z0-9_]+$/, 'an error code is SCREAMING_SNAKE with a prefix'),
  message: z.string(),
  details: z.unknown(),
});

/**
 * The wire envelope `{code, message, details}` and HTTP status for any thrown value. Expected
 * failures keep their code; anything else is a defect and is reported as `INTERNAL_ERROR` without
 * leaking its message.
 */
export function errorEnvelopeOf(error: unknown): { status: number; body: ErrorEnvelope } {
  if (error instanceof FlowfleetError) return { status: error.httpStatus, body: error.toJSON() };
  return {
    status: 500,
    body: { code: 'INTERNAL_ERROR', message: 'internal error', details: {} },
  };
}
