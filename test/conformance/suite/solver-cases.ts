import {
  cfgCombine,
  flowGrpoStdDev,
  flowMatchStep,
  flowSdeStep,
  gaussianNoise,
  linearShiftSigmas,
} from '@flowfleet/numerics';
import { SOLVER_OP } from '@flowfleet/platform';

/** One comparison of a backend output with the reference. */
export interface SolverOutput {
  readonly label: string;
  readonly actual: Float32Array | Float64Array;
  readonly expected: Float32Array | Float64Array;
}

/** One generated case of a solver op: runs the kernel under test and the reference. */
export interface SolverCase {
  readonly name: string;
  compare(kernel: unknown): readonly SolverOutput[];
}

const SIZES = [1, 7, 256, 4099];
const SEED = 20_261_130;
const SIGMAS = linearShiftSigmas(10, 3);

type FlowMatchStepFn = typeof flowMatchStep;
type CfgCombineFn = typeof cfgCombine;
type FlowSdeStepFn = typeof flowSdeStep;

function copy(array: Float32Array): Float32Array {
  return Float32Array.from(array);
}

function flowMatchStepCases(): SolverCase[] {
  return SIZES.flatMap((n) =>
    [0, 4, 9].map((step) => ({
      name: `n=${n}, σ=${(SIGMAS[step] ?? 0).toFixed(3)}`,
      compare(kernel: unknown): SolverOutput[] {
        const fn = kernel as FlowMatchStepFn;
        const x = gaussianNoise(SEED, 0, n);
        const v = gaussianNoise(SEED, 1, n);
        const [sigma, next] = [SIGMAS[step] ?? 1, SIGMAS[step + 1] ?? 0];
        const expected = flowMatchStep(x, v, sigma, next);
        const inPlace = copy(x);
        fn(inPlace, v, sigma, next, inPlace);
        const out = new Float32Array(n);
        fn(x, v, sigma, next, out);
        return [
          { label: 'allocated', actual: fn(x, v, sigma, next), expected },
          { label: 'into out', actual: out, expected },
          { label: 'in place (out = x)', actual: inPlace, expected },
          { label: 'x untouched', actual: x, expected: gaussianNoise(SEED, 0, n) },
        ];
      },
    })),
  );
}

function cfgCombineCases(): SolverCase[] {
  return SIZES.flatMap((n) =>
    [0, 1, 4.5, 7.5, -1].map((scale) => ({
      name: `n=${n}, scale=${scale}`,
      compare(kernel: unknown): SolverOutput[] {
        const fn = kernel as CfgCombineFn;
        const uncond = gaussianNoise(SEED, 2, n);
        const cond = gaussianNoise(SEED, 3, n);
        const expected = cfgCombine(uncond, cond, scale);
        const aliased = copy(cond);
        fn(uncond, aliased, scale, aliased);
        return [
          { label: 'allocated', actual: fn(uncond, cond, scale), expected },
          { label: 'in place (out = cond)', actual: aliased, expected },
        ];
      },
    })),
  );
}

function flowSdeStepCases(): SolverCase[] {
  return SIZES.flatMap((n) =>
    [0, 5, 9].map((step) => ({
      name: `n=${n}, step=${step}`,
      compare(kernel: unknown): SolverOutput[] {
        const fn = kernel as FlowSdeStepFn;
        const base = {
          x: gaussianNoise(SEED, 4, n),
          v: gaussianNoise(SEED, 5, n),
          sigma: SIGMAS[step] ?? 1,
          sigmaNext: SIGMAS[step + 1] ?? 0,
          stdDevT: flowGrpoStdDev(SIGMAS, step, 0.7),
        };
        const noise = gaussianNoise(SEED, 1 + step, n);
        const expected = flowSdeStep({ ...base, noise });
        const actual = fn({ ...base, noise });
        const recomputed = fn({ ...base, prevSample: expected.sample });
        const scalars = (r: { logProb: number; std: number }) => Float64Array.of(r.logProb, r.std);
        return [
          { label: 'sample', actual: actual.sample, expected: expected.sample },
          { label: 'mean', actual: actual.mean, expected: expected.mean },
          { label: 'logProb, std', actual: scalars(actual), expected: scalars(expected) },
          { label: 'recomputed logProb', actual: scalars(recomputed), expected: scalars(expected) },
        ];
      },
    })),
  );
}

/** Generated cases per solver op: several sizes, steps of a shifted schedule, CFG scales. */
export function solverCases(op: string): readonly SolverCase[] {
  switch (op) {
    case SOLVER_OP.euler:
      return flowMatchStepCases();
    case SOLVER_OP.cfg:
      return cfgCombineCases();
    case SOLVER_OP.sde:
      return flowSdeStepCases();
    default:
      return [];
  }
}
