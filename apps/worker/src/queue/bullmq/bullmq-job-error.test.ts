import { FlowfleetError } from '@flowfleet/errors';
import { ErrorEnvelopeSchema } from '@flowfleet/protocol';
import { UnrecoverableError } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { toJobError } from './bullmq-job-error.js';

describe('toJobError', () => {
  it('carries the error envelope as the message, retryable for transient failures', () => {
    const error = toJobError(
      new FlowfleetError('WORKER_RESULT_UPLOAD_FAILED', 'coordinator down', {
        details: { retryable: true },
      }),
      false,
    );
    expect(error).not.toBeInstanceOf(UnrecoverableError);
    expect(ErrorEnvelopeSchema.parse(JSON.parse(error.message))).toEqual({
      code: 'WORKER_RESULT_UPLOAD_FAILED',
      message: 'coordinator down',
      details: { retryable: true },
    });
  });

  it('fails bad payloads and result conflicts without retry', () => {
    for (const code of [
      'PROTO_INVALID_JOB',
      'WORKER_JOB_UNSERVABLE',
      'WORKER_RESULT_CONFLICT',
    ] as const) {
      expect(toJobError(new FlowfleetError(code, 'x'), false)).toBeInstanceOf(UnrecoverableError);
    }
  });

  it('withholds a defect message and hands a job back when the worker closes', () => {
    const defect = toJobError(new TypeError('secret internals'), false);
    expect(JSON.parse(defect.message)).toMatchObject({ code: 'INTERNAL_ERROR' });
    expect(defect.message).not.toContain('secret');
    expect(toJobError(new Error('cancelled'), true).message).toBe('bullmq:rateLimitExceeded');
  });
});
