import { describe, expect, it } from 'vitest';
import { flowGrpoStdDev } from './flow-grpo-std-dev.js';

describe('flowGrpoStdDev', () => {
  const sigmas = [1, 0.9, 0.75, 0.5, 0];

  it('is a·sqrt(σ/(1 − σ)) inside the schedule', () => {
    expect(flowGrpoStdDev(sigmas, 3, 0.7)).toBeCloseTo(0.7, 15);
    expect(flowGrpoStdDev(sigmas, 2, 1)).toBeCloseTo(Math.sqrt(3), 14);
  });

  it('uses σ_1 in the denominator at σ = 1 (where 1 − σ would be 0)', () => {
    expect(flowGrpoStdDev(sigmas, 0, 1)).toBeCloseTo(Math.sqrt(1 / 0.1), 13);
    expect(Number.isFinite(flowGrpoStdDev(sigmas, 0, 0.7))).toBe(true);
  });

  it('rejects steps without a successor, σ outside (0, 1], σ_1 = 1 and negative noise', () => {
    const calls = [
      () => flowGrpoStdDev(sigmas, 4, 0.7),
      () => flowGrpoStdDev(sigmas, -1, 0.7),
      () => flowGrpoStdDev(sigmas, 1.5, 0.7),
      () => flowGrpoStdDev([1], 0, 0.7),
      () => flowGrpoStdDev([1.2, 0.5, 0], 0, 0.7),
      () => flowGrpoStdDev([1, 1, 0], 0, 0.7),
      () => flowGrpoStdDev([0.5, 0, 0], 1, 0.7),
      () => flowGrpoStdDev(sigmas, 1, -0.1),
      () => flowGrpoStdDev(sigmas, 1, Number.NaN),
    ];
    for (const call of calls) {
      expect(call).toThrow(expect.objectContaining({ code: 'NUM_INVALID_ARGUMENT' }));
    }
  });
});
