import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, publishedLimitsOf, resolveLimits } from './limits.js';

describe('resolveLimits', () => {
  it('returns the defaults, overridden where given', () => {
    expect(resolveLimits()).toEqual(DEFAULT_LIMITS);
    expect(DEFAULT_LIMITS).toMatchObject({
      maxSteps: 100,
      maxGroupSize: 64,
      maxBodyBytes: 1_048_576,
      maxLatentElements: 1_048_576,
    });
    expect(resolveLimits({ maxSteps: 20, maxGroupSize: undefined })).toEqual({
      ...DEFAULT_LIMITS,
      maxSteps: 20,
    });
  });

  it.each([
    ['zero', { maxSteps: 0 }],
    ['a fraction', { maxGroupSize: 1.5 }],
    ['NaN', { maxBodyBytes: Number.NaN }],
    ['an unknown key', { maxWidgets: 3 } as never],
  ])('rejects %s', (_name, overrides) => {
    expect(() => resolveLimits(overrides)).toThrow(
      expect.objectContaining({ code: 'PROTO_INVALID_LIMITS' }),
    );
    try {
      resolveLimits(overrides);
    } catch (error) {
      expect(isFlowfleetError(error, 'PROTO_INVALID_LIMITS')).toBe(true);
    }
  });
});

describe('published limits', () => {
  it('publishedLimitsOf reads decimal integers and defaults the rest', () => {
    expect(publishedLimitsOf({})).toEqual({
      limits: DEFAULT_LIMITS,
      published: false,
      unreadable: [],
    });
    expect(
      publishedLimitsOf({ maxSteps: '160', maxBodyBytes: '0', maxBlobBytes: '1e9', other: '5' }),
    ).toEqual({
      limits: { ...DEFAULT_LIMITS, maxSteps: 160 },
      published: true,
      unreadable: ['maxBodyBytes', 'maxBlobBytes'],
    });
  });
});
