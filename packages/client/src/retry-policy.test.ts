import { describe, expect, it } from 'vitest';
import { backoffDelayMs, isRetryableFailure, parseRetryAfter } from './retry-policy.js';

const POLICY = { attempts: 10, baseDelayMs: 100, maxDelayMs: 1_000, deadlineMs: 60_000 };

describe('isRetryableFailure', () => {
  it('retries an idempotent request on network failures, timeouts and "not now" statuses', () => {
    for (const failure of ['network', 'timeout', 408, 429, 502, 503, 504, 507] as const) {
      expect(isRetryableFailure(failure, true)).toBe(true);
    }
  });

  it('never retries another 4xx or 5xx, and a non-idempotent request only when unsent', () => {
    for (const status of [400, 401, 403, 404, 409, 413, 422, 500, 501, 505]) {
      expect(isRetryableFailure(status, true)).toBe(false);
    }
    expect(isRetryableFailure('network', false)).toBe(false);
    expect(isRetryableFailure(503, false)).toBe(false);
    expect(isRetryableFailure('network', false, true)).toBe(true);
  });
});

describe('backoffDelayMs', () => {
  it('doubles from the base up to the cap, jittered to [½, 1] of it', () => {
    expect([1, 2, 3, 4, 5].map((n) => backoffDelayMs(POLICY, n, () => 1))).toEqual([
      100, 200, 400, 800, 1_000,
    ]);
    expect(backoffDelayMs(POLICY, 1, () => 0)).toBe(50);
    expect(backoffDelayMs(POLICY, 40, () => 0)).toBe(500);
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates, and ignores anything else', () => {
    expect(parseRetryAfter('3')).toBe(3_000);
    expect(parseRetryAfter(' 0 ')).toBe(0);
    const now = Date.parse('2026-12-01T10:00:00Z');
    expect(parseRetryAfter('Tue, 01 Dec 2026 10:00:05 GMT', now)).toBe(5_000);
    expect(parseRetryAfter('Tue, 01 Dec 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter('-1')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});
