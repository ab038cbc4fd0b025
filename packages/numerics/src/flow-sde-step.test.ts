import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { flowGrpoStdDev } from './flow-grpo-std-dev.js';
import { flowSdeStep } from './flow-sde-step.js';
import type { FlowSdeStepArgs } from './flow-sde-step.js';
import { gaussianNoise } from './gaussian-noise.js';
import { linearShiftSigmas } from './linear-shift-sigmas.js';

const latent = (length: number) =>
  fc.float32Array({
    min: Math.fround(-4),
    max: Math.fround(4),
    noNaN: true,
    minLength: length,
    maxLength: length,
  });

/** A random rollout step: a schedule, a step in it, x, v, noise level, seed. */
const rolloutStep = fc
  .record({
    n: fc.integer({ min: 1, max: 48 }),
    steps: fc.integer({ min: 2, max: 60 }),
    shift: fc.double({ min: 1, max: 8, noNaN: true }),
    stepFraction: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
    noiseLevel: fc.double({ min: 0.1, max: 1.5, noNaN: true }),
    seed: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  })
  .chain((p) => fc.record({ p: fc.constant(p), x: latent(p.n), v: latent(p.n) }));

describe('flowSdeStep', () => {
  it('recomputing a sample via prevSample gives exactly the same log-prob and mean', () => {
    fc.assert(
      fc.property(rolloutStep, ({ p, x, v }) => {
        const sigmas = linearShiftSigmas(p.steps, p.shift);
        const step = Math.floor(p.stepFraction * p.steps);
        const base = {
          x,
          v,
          sigma: sigmas[step]!,
          sigmaNext: sigmas[step + 1]!,
          stdDevT: flowGrpoStdDev(sigmas, step, p.noiseLevel),
        };
        const noise = gaussianNoise(p.seed, 1 + step, p.n);
        const rollout = flowSdeStep({ ...base, noise });
        const again = flowSdeStep({ ...base, prevSample: Float32Array.from(rollout.sample) });
        expect(Number.isFinite(rollout.logProb)).toBe(true);
        expect(again.logProb === rollout.logProb).toBe(true);
        expect(again.mean).toEqual(rollout.mean);
        expect(again.std).toBe(rollout.std);
      }),
      { numRuns: 300 },
    );
  });

  it('computes μ, e, the float32 sample and the mean log-density as DESIGN.md §4 states', () => {
    const x = Float32Array.from([0.5, -1.25, 2]);
    const v = Float32Array.from([-0.75, 0.5, 1]);
    const noise = Float32Array.from([0.3, -1.1, 0]);
    const [sigma, sigmaNext, s] = [0.8, 0.6, 0.7];
    const r = flowSdeStep({ x, v, sigma, sigmaNext, stdDevT: s, noise });
    const dt = sigmaNext - sigma;
    const e = s * Math.sqrt(-dt);
    let lp = 0;
    for (let i = 0; i < 3; i++) {
      const mu =
        x[i]! * (1 + (s * s * dt) / (2 * sigma)) +
        v[i]! * (1 + (s * s * (1 - sigma)) / (2 * sigma)) * dt;
      expect(r.mean[i]).toBe(Math.fround(mu));
      expect(r.sample[i]).toBe(Math.fround(mu + e * noise[i]!));
      lp += -((r.sample[i]! - mu) ** 2) / (2 * e * e) - Math.log(e) - 0.5 * Math.log(2 * Math.PI);
    }
    expect(r.std).toBeCloseTo(e, 15);
    expect(r.logProb).toBeCloseTo(lp / 3, 12);
  });

  it('writes into out buffers (aliasing x and v) with the same results', () => {
    const x = Float32Array.from([0.5, -1.25, 2, 0.1]);
    const v = Float32Array.from([-0.75, 0.5, 1, 0.2]);
    const args = { sigma: 0.5, sigmaNext: 0.25, stdDevT: 0.7, noise: gaussianNoise(3, 2, 4) };
    const fresh = flowSdeStep({ x, v, ...args });
    const xs = Float32Array.from(x);
    const vs = Float32Array.from(v);
    const aliased = flowSdeStep({ x: xs, v: vs, ...args, out: { sample: xs, mean: vs } });
    expect(aliased.sample).toBe(xs);
    expect(aliased.mean).toBe(vs);
    expect(aliased.sample).toEqual(fresh.sample);
    expect(aliased.mean).toEqual(fresh.mean);
    expect(aliased.logProb).toBe(fresh.logProb);
  });

  it('returns prevSample itself when recomputing, or a copy in out.sample', () => {
    const x = Float32Array.from([0.5, -1.25]);
    const v = Float32Array.from([-0.75, 0.5]);
    const prevSample = Float32Array.from([0.4, -1.2]);
    const base = { x, v, sigma: 0.5, sigmaNext: 0.25, stdDevT: 0.7, prevSample };
    expect(flowSdeStep(base).sample).toBe(prevSample);
    const sample = new Float32Array(2);
    expect(flowSdeStep({ ...base, out: { sample } }).sample).toBe(sample);
    expect(sample).toEqual(prevSample);
  });

  it('rejects anything but exactly one of noise and prevSample, and bad σ, stdDevT, lengths', () => {
    const x = Float32Array.from([0.5, -1.25]);
    const v = Float32Array.from([-0.75, 0.5]);
    const z = Float32Array.from([0.1, 0.2]);
    const ok = { x, v, sigma: 0.5, sigmaNext: 0.25, stdDevT: 0.7 };
    const bad: FlowSdeStepArgs[] = [
      ok,
      { ...ok, noise: z, prevSample: z },
      { ...ok, noise: new Float32Array(3) },
      { ...ok, prevSample: new Float32Array(1) },
      { ...ok, v: new Float32Array(3), noise: z },
      { ...ok, x: new Float32Array(0), v: new Float32Array(0), noise: new Float32Array(0) },
      { ...ok, sigma: 0, sigmaNext: 0, noise: z },
      { ...ok, sigma: 1.1, noise: z },
      { ...ok, sigmaNext: 0.5, noise: z },
      { ...ok, sigmaNext: 0.75, noise: z },
      { ...ok, sigmaNext: -0.1, noise: z },
      { ...ok, stdDevT: 0, noise: z },
      { ...ok, stdDevT: Number.POSITIVE_INFINITY, noise: z },
      { ...ok, noise: z, out: { mean: new Float32Array(5) } },
    ];
    for (const args of bad) {
      expect(() => flowSdeStep(args)).toThrow(
        expect.objectContaining({ code: 'NUM_INVALID_ARGUMENT' }),
      );
    }
  });
});
