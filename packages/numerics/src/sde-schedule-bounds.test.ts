import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { flowGrpoStdDev } from './flow-grpo-std-dev.js';
import { flowSdeStep } from './flow-sde-step.js';
import { gaussianNoise } from './gaussian-noise.js';
import { linearShiftSigmas } from './linear-shift-sigmas.js';
import {
  NOISE_LEVEL_RANGE,
  SDE_MIN_STEP_STD,
  SHIFT_RANGE,
  sdeScheduleIssue,
} from './sde-schedule-bounds.js';

describe('sdeScheduleIssue', () => {
  it('passes the FlowGRPO defaults at every step count up to 1000', () => {
    for (const steps of [1, 2, 3, 10, 100, 1000]) {
      expect(sdeScheduleIssue(linearShiftSigmas(steps, 3), 0.7)).toBeUndefined();
    }
  });

  it('names the first step under the noise floor (e = a at σ = 1)', () => {
    const sigmas = linearShiftSigmas(1, 3);
    expect(sdeScheduleIssue(sigmas, SDE_MIN_STEP_STD)).toBeUndefined();
    const issue = sdeScheduleIssue(sigmas, SDE_MIN_STEP_STD * 0.99);
    expect(issue).toMatchObject({ step: 0, rule: 'noise_floor' });
    expect(issue!.std).toBeCloseTo(SDE_MIN_STEP_STD * 0.99, 15);
    // The values that failed on workers: e² underflows, the log-prob is −∞.
    const schedule = linearShiftSigmas(10, 3);
    expect(sdeScheduleIssue(schedule, 1e-300)?.rule).toBe('noise_floor');
    expect(sdeScheduleIssue(schedule, 5e-324)?.rule).toBe('noise_floor');
    // Later steps have less noise than σ = 1: the last one is the first to fall under the floor.
    expect(sdeScheduleIssue(schedule, 0.0015)).toMatchObject({ step: 9, rule: 'noise_floor' });
  });

  it('refuses a noise level above 2 at σ = 1, where the mean is (1 − a²/2)·x + …', () => {
    const sigmas = linearShiftSigmas(1, 3);
    expect(sdeScheduleIssue(sigmas, NOISE_LEVEL_RANGE.max)).toBeUndefined();
    const issue = sdeScheduleIssue(sigmas, 2.01);
    expect(issue).toMatchObject({ step: 0, rule: 'mean_gain' });
    expect(issue!.coefX).toBeCloseTo(1 - 2.01 ** 2 / 2, 12);
  });

  it('refuses a schedule whose second step amplifies the latent (few steps, large shift)', () => {
    expect(sdeScheduleIssue(linearShiftSigmas(2, 10), 0.7)).toMatchObject({
      step: 1,
      rule: 'mean_gain',
    });
    expect(sdeScheduleIssue(linearShiftSigmas(3, 10), 0.7)).toBeUndefined();
  });

  it('leaves no SDE schedule of ≥ 2 steps at the smallest shift', () => {
    for (const steps of [2, 3, 10]) {
      expect(sdeScheduleIssue(linearShiftSigmas(steps, SHIFT_RANGE.min), 1.99)?.rule).toBe(
        'noise_floor',
      );
    }
  });

  it('whatever it passes, a rollout of bounded velocities stays finite with finite log-probs', () => {
    const n = 64;
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.double({ min: SHIFT_RANGE.min, max: SHIFT_RANGE.max, noNaN: true }),
        fc.double({ min: NOISE_LEVEL_RANGE.min, max: NOISE_LEVEL_RANGE.max, noNaN: true }),
        fc.integer({ min: 0, max: 2 ** 32 }),
        (steps, shift, noiseLevel, seed) => {
          const sigmas = linearShiftSigmas(steps, shift);
          fc.pre(sdeScheduleIssue(sigmas, noiseLevel) === undefined);
          // A flow-matching velocity of the ideal model: x_σ = (1 − σ)·x0 + σ·ε gives v = ε − x0.
          const x0 = gaussianNoise(seed, 1_000_000, n);
          let x = gaussianNoise(seed, 0, n);
          for (let i = 0; i < steps; i++) {
            const sigma = sigmas[i]!;
            const v = x.map((xi, j) => (xi - x0[j]!) / sigma);
            const out = flowSdeStep({
              x,
              v,
              sigma,
              sigmaNext: sigmas[i + 1]!,
              stdDevT: flowGrpoStdDev(sigmas, i, noiseLevel),
              noise: gaussianNoise(seed, 1 + i, n),
            });
            expect(Number.isFinite(out.logProb)).toBe(true);
            x = out.sample;
          }
          expect(x.every(Number.isFinite)).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });
});
