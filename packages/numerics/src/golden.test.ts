// Every case of the golden vectors (testdata/flowmath.json: an independent numpy implementation
// of DESIGN.md §4) at the contract's tolerances, compared directly here rather than through
// verifyVectors, so a bug in the verifier cannot hide a bug in the maths.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cfgCombine } from './cfg-combine.js';
import { float32UlpDistance } from './float32-ulp.js';
import { flowGrpoStdDev } from './flow-grpo-std-dev.js';
import { flowMatchStep } from './flow-match-step.js';
import { flowSdeStep } from './flow-sde-step.js';
import { gaussianNoise } from './gaussian-noise.js';
import { linearShiftSigmas } from './linear-shift-sigmas.js';
import { philox4x32x10 } from './philox.js';
import type {
  CfgCase,
  EulerCase,
  NormalsCase,
  PhiloxKatCase,
  SdeRecomputeCase,
  SdeSampleCase,
  SigmasCase,
} from './vector-format.js';

interface Golden {
  philox_kat: PhiloxKatCase[];
  normals: NormalsCase[];
  sigmas: SigmasCase[];
  euler: EulerCase[];
  cfg: CfgCase[];
  sde_sample: SdeSampleCase[];
  sde_recompute: SdeRecomputeCase[];
}

const goldenBytes = readFileSync(new URL('../testdata/flowmath.json', import.meta.url));
const golden = JSON.parse(goldenBytes.toString('utf8')) as Golden;

/** sha256 of shared/golden/flowmath.json as shipped (see testdata/README.md). */
const GOLDEN_SHA256 = '40fe96f7714e32462fed9d3806a0548bd24b1514688d42061bf1e9a95a7b4b23';

const f32 = (values: readonly number[]) => Float32Array.from(values);

/** Failure descriptions for elements more than 1 float32 ulp apart. */
function ulpFailures(where: string, got: ArrayLike<number>, expected: readonly number[]): string[] {
  if (got.length !== expected.length)
    return [`${where}: length ${got.length} ≠ ${expected.length}`];
  const failures: string[] = [];
  expected.forEach((value, k) => {
    const distance = float32UlpDistance(got[k]!, value);
    if (distance > 1) failures.push(`${where}[${k}]: ${got[k]} vs ${value} (${distance} ulp)`);
  });
  return failures;
}

function relativeFailures(where: string, got: number, expected: number): string[] {
  const error = Math.abs(got - expected) / Math.max(Math.abs(got), Math.abs(expected));
  return got === expected || error <= 1e-12
    ? []
    : [`${where}: ${got} vs ${expected} (rel ${error})`];
}

describe('golden vectors (testdata/flowmath.json)', () => {
  it('is the shipped file byte for byte (never edited or reformatted)', () => {
    expect(createHash('sha256').update(goldenBytes).digest('hex')).toBe(GOLDEN_SHA256);
  });

  it('has every group, non-empty', () => {
    const counts = Object.fromEntries(Object.entries(golden).map(([k, v]) => [k, v.length]));
    expect(counts).toEqual({
      philox_kat: 3,
      normals: 8,
      sigmas: 4,
      euler: 8,
      cfg: 8,
      sde_sample: 8,
      sde_recompute: 8,
    });
  });

  it('philox_kat: every case exact', () => {
    const failures = golden.philox_kat.flatMap((c, i) => {
      const got = philox4x32x10(c.ctr, c.key);
      return got.every((word, k) => word === c.out[k]) ? [] : [`philox_kat[${i}]: ${got}`];
    });
    expect(failures).toEqual([]);
  });

  it('normals: every case within 1 float32 ulp', () => {
    const failures = golden.normals.flatMap((c, i) =>
      ulpFailures(`normals[${i}].out`, gaussianNoise(c.seed, c.stream, c.n), c.out),
    );
    expect(failures).toEqual([]);
  });

  it('sigmas: every case within 1e-15 absolute', () => {
    const failures = golden.sigmas.flatMap((c, i) => {
      const got = linearShiftSigmas(c.steps, c.shift);
      if (got.length !== c.out.length) return [`sigmas[${i}]: length ${got.length}`];
      return c.out.flatMap((value, k) =>
        Math.abs(got[k]! - value) <= 1e-15 ? [] : [`sigmas[${i}].out[${k}]: ${got[k]} vs ${value}`],
      );
    });
    expect(failures).toEqual([]);
  });

  it('euler: every case within 1 float32 ulp', () => {
    const failures = golden.euler.flatMap((c, i) =>
      ulpFailures(
        `euler[${i}].out`,
        flowMatchStep(f32(c.x), f32(c.v), c.sigma, c.sigmaNext),
        c.out,
      ),
    );
    expect(failures).toEqual([]);
  });

  it('cfg: every case within 1 float32 ulp', () => {
    const failures = golden.cfg.flatMap((c, i) =>
      ulpFailures(`cfg[${i}].out`, cfgCombine(f32(c.uncond), f32(c.cond), c.scale), c.out),
    );
    expect(failures).toEqual([]);
  });

  it('sde_sample: sample and mean within 1 ulp; stdDevT, logProb, std within 1e-12', () => {
    const failures = golden.sde_sample.flatMap((c, i) => {
      const stdDevT = flowGrpoStdDev(c.sigmas, c.step, c.noiseLevel);
      const r = flowSdeStep({
        x: f32(c.x),
        v: f32(c.v),
        sigma: c.sigmas[c.step]!,
        sigmaNext: c.sigmas[c.step + 1]!,
        stdDevT,
        noise: gaussianNoise(c.seed, c.stream, c.x.length),
      });
      return [
        ...relativeFailures(`sde_sample[${i}].stdDevT`, stdDevT, c.stdDevT),
        ...ulpFailures(`sde_sample[${i}].sample`, r.sample, c.sample),
        ...ulpFailures(`sde_sample[${i}].mean`, r.mean, c.mean),
        ...relativeFailures(`sde_sample[${i}].logProb`, r.logProb, c.logProb),
        ...relativeFailures(`sde_sample[${i}].std`, r.std, c.std),
      ];
    });
    expect(failures).toEqual([]);
  });

  it('sde_recompute: mean within 1 ulp; logProb within 1e-12', () => {
    const failures = golden.sde_recompute.flatMap((c, i) => {
      const r = flowSdeStep({
        x: f32(c.x),
        v: f32(c.v),
        sigma: c.sigmas[c.step]!,
        sigmaNext: c.sigmas[c.step + 1]!,
        stdDevT: c.stdDevT,
        prevSample: f32(c.prevSample),
      });
      return [
        ...relativeFailures(
          `sde_recompute[${i}].stdDevT`,
          flowGrpoStdDev(c.sigmas, c.step, c.noiseLevel),
          c.stdDevT,
        ),
        ...ulpFailures(`sde_recompute[${i}].mean`, r.mean, c.mean),
        ...relativeFailures(`sde_recompute[${i}].logProb`, r.logProb, c.logProb),
      ];
    });
    expect(failures).toEqual([]);
  });
});
