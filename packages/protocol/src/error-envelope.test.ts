import { FlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { errorEnvelopeOf } from './error-envelope.js';

describe('errorEnvelopeOf', () => {
  it('keeps the code, message, details and status of a FlowfleetError', () => {
    const error = new FlowfleetError('PLAT_UNKNOWN_ARCH', 'unknown arch sm7x', {
      details: { arch: 'sm7x' },
    });
    expect(errorEnvelopeOf(error)).toEqual({
      status: 400,
      body: { code: 'PLAT_UNKNOWN_ARCH', message: 'unknown arch sm7x', details: { arch: 'sm7x' } },
    });
  });

  it('hides the message of an unexpected error', () => {
    expect(errorEnvelopeOf(new TypeError('secret path /root/x'))).toEqual({
      status: 500,
      body: { code: 'INTERNAL_ERROR', message: 'internal error', details: {} },
    });
  });
});
