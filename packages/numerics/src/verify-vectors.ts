import { isFlowfleetError } from '@flowfleet/errors';
import { cfgCombine } from './cfg-combine.js';
import {
  NUMERICS_TOLERANCES,
  checkAbsoluteArray,
  checkExact,
  checkFloat32Array,
  checkRelative,
} from './compare.js';
import type { FieldCheck } from './compare.js';
import { flowGrpoStdDev } from './flow-grpo-std-dev.js';
import { flowMatchStep } from './flow-match-step.js';
import { flowSdeStep } from './flow-sde-step.js';
import { gaussianNoise } from './gaussian-noise.js';
import { linearShiftSigmas } from './linear-shift-sigmas.js';
import { parseVectors } from './parse-vectors.js';
import { philox4x32x10 } from './philox.js';
import { VECTOR_GROUPS } from './vector-format.js';
import type {
  CfgCase,
  EulerCase,
  GoldenVectors,
  NormalsCase,
  PhiloxKatCase,
  SdeRecomputeCase,
  SdeSampleCase,
  SigmasCase,
  VectorGroup,
} from './vector-format.js';

/** The verdict on one case of a vectors file. */
export interface CaseResult {
  readonly group: VectorGroup;
  readonly index: number;
  readonly passed: boolean;
  /** Every compared field with its error; for a failure, the failing fields come first. */
  readonly detail: string;
}

/** Pass/fail counts of one group present in the file. */
export interface GroupSummary {
  readonly group: VectorGroup;
  readonly passed: number;
  readonly failed: number;
}

/** The outcome of verifyVectors. */
export interface VerifyReport {
  readonly cases: readonly CaseResult[];
  readonly groups: readonly GroupSummary[];
  readonly passed: number;
  readonly failed: number;
  /** Top-level keys that are not case groups: ignored, but reported. */
  readonly unknownKeys: readonly string[];
}

const f32 = (values: readonly number[]): Float32Array => Float32Array.from(values);

function sdeArgs(c: SdeSampleCase | SdeRecomputeCase, stdDevT: number) {
  return {
    x: f32(c.x),
    v: f32(c.v),
    sigma: c.sigmas[c.step] as number,
    sigmaNext: c.sigmas[c.step + 1] as number,
    stdDevT,
  };
}

/** The case type of group G. */
type CaseOf<G extends VectorGroup> = NonNullable<GoldenVectors[G]>[number];

const CHECKERS: { readonly [G in VectorGroup]: (c: CaseOf<G>) => FieldCheck[] } = {
  philox_kat: (c: PhiloxKatCase) => [checkExact('out', philox4x32x10(c.ctr, c.key), c.out)],
  normals: (c: NormalsCase) => [
    checkFloat32Array('out', gaussianNoise(c.seed, c.stream, c.n), c.out),
  ],
  sigmas: (c: SigmasCase) => [
    checkAbsoluteArray(
      'out',
      linearShiftSigmas(c.steps, c.shift),
      c.out,
      NUMERICS_TOLERANCES.sigmasAbsolute,
    ),
  ],
  euler: (c: EulerCase) => [
    checkFloat32Array('out', flowMatchStep(f32(c.x), f32(c.v), c.sigma, c.sigmaNext), c.out),
  ],
  cfg: (c: CfgCase) => [
    checkFloat32Array('out', cfgCombine(f32(c.uncond), f32(c.cond), c.scale), c.out),
  ],
  sde_sample: (c: SdeSampleCase) => {
    const stdDevT = flowGrpoStdDev(c.sigmas, c.step, c.noiseLevel);
    const noise = gaussianNoise(c.seed, c.stream, c.x.length);
    const result = flowSdeStep({ ...sdeArgs(c, stdDevT), noise });
    return [
      checkRelative('stdDevT', stdDevT, c.stdDevT),
      checkFloat32Array('sample', result.sample, c.sample),
      checkFloat32Array('mean', result.mean, c.mean),
      checkRelative('logProb', result.logProb, c.logProb),
      checkRelative('std', result.std, c.std),
    ];
  },
  sde_recompute: (c: SdeRecomputeCase) => {
    // stdDevT is an input here (the trainer's recorded value); it is still checked against the
    // noise level and schedule, since a recorded value that disagrees is a bug worth naming.
    const stdDevT = flowGrpoStdDev(c.sigmas, c.step, c.noiseLevel);
    const result = flowSdeStep({ ...sdeArgs(c, c.stdDevT), prevSample: f32(c.prevSample) });
    return [
      checkRelative('stdDevT', stdDevT, c.stdDevT),
      checkFloat32Array('mean', result.mean, c.mean),
      checkRelative('logProb', result.logProb, c.logProb),
    ];
  },
};

function verifyCase<G extends VectorGroup>(
  group: G,
  index: number,
  testCase: CaseOf<G>,
): CaseResult {
  let checks: FieldCheck[];
  try {
    checks = (CHECKERS[group] as (c: CaseOf<G>) => FieldCheck[])(testCase);
  } catch (error) {
    // The file's values are outside a function's domain: this case fails, the rest still run.
    if (isFlowfleetError(error, 'NUM_INVALID_ARGUMENT')) {
      return { group, index, passed: false, detail: `rejected its arguments: ${error.message}` };
    }
    throw error;
  }
  const failures = checks.filter((check) => !check.ok);
  const ordered = [...failures, ...checks.filter((check) => check.ok)];
  return {
    group,
    index,
    passed: failures.length === 0,
    detail: ordered.map((check) => check.detail).join('; '),
  };
}

/**
 * Checks this implementation against a golden-vectors file (shared/golden/README.md format) at
 * the tolerances of DESIGN.md §4: Philox exact; normals, Euler, CFG, SDE sample and mean within
 * 1 float32 ulp; logProb, std (and stdDevT) within 1e-12 relative; sigmas within 1e-15 absolute.
 *
 * @param json the parsed file (JSON.parse output).
 * @throws NUM_VECTORS_MALFORMED naming the bad field when the file does not have the format.
 */
export function verifyVectors(json: unknown): VerifyReport {
  const { vectors, unknownKeys } = parseVectors(json);
  const cases: CaseResult[] = [];
  const groups: GroupSummary[] = [];
  for (const group of VECTOR_GROUPS) {
    const groupCases = vectors[group];
    if (groupCases === undefined) continue;
    const results = groupCases.map((testCase, index) => verifyCase(group, index, testCase));
    const passed = results.filter((result) => result.passed).length;
    groups.push({ group, passed, failed: results.length - passed });
    cases.push(...results);
  }
  const passed = cases.filter((result) => result.passed).length;
  return { cases, groups, passed, failed: cases.length - passed, unknownKeys };
}
