import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { linearShiftSigmas } from './linear-shift-sigmas.js';

describe('linearShiftSigmas', () => {
  it('is linear from 1 to 0 with shift 1', () => {
    expect([...linearShiftSigmas(4, 1)]).toEqual([1, 0.75, 0.5, 0.25, 0]);
  });

  it('applies the shift formula σ = shift·s/(1 + (shift − 1)·s)', () => {
    const sigmas = linearShiftSigmas(4, 3);
    expect(sigmas).toBeInstanceOf(Float64Array);
    expect(sigmas[1]).toBeCloseTo((3 * 0.75) / (1 + 2 * 0.75), 15);
    expect(sigmas[2]).toBeCloseTo(0.75, 15);
  });

  it('runs from exactly 1 to exactly 0, strictly decreasing, with length steps + 1', () => {
    // The literal formula gives 1 − 8e-16 at i = 0 for shift 0.05; the contract says σ_0 = 1.
    expect(linearShiftSigmas(10, 0.05)[0]).toBe(1);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.double({ min: 0.05, max: 20, noNaN: true }),
        (steps, shift) => {
          const sigmas = linearShiftSigmas(steps, shift);
          expect(sigmas.length).toBe(steps + 1);
          expect(sigmas[0]).toBe(1);
          expect(sigmas[steps]).toBe(0);
          const increases = sigmas.findIndex((sigma, i) => i > 0 && !(sigma < sigmas[i - 1]!));
          expect(increases).toBe(-1);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('rejects steps < 1, fractional steps and non-positive shifts', () => {
    const calls = [
      () => linearShiftSigmas(0, 3),
      () => linearShiftSigmas(2.5, 3),
      () => linearShiftSigmas(10_000_001, 3),
      () => linearShiftSigmas(10, 0),
      () => linearShiftSigmas(10, -1),
      () => linearShiftSigmas(10, Number.POSITIVE_INFINITY),
    ];
    for (const call of calls) {
      expect(call).toThrow(expect.objectContaining({ code: 'NUM_INVALID_ARGUMENT' }));
    }
  });
});
