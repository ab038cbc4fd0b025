import { invalidArgument, outputArray, requireLength } from './argument-checks.js';

const HALF_LOG_TWO_PI = 0.5 * Math.log(2 * Math.PI);
const EMPTY = new Float32Array(0);

/** Arguments of one FlowGRPO SDE step; give exactly one of `noise` and `prevSample`. */
export interface FlowSdeStepArgs {
  /** The current latent x_t (float32). */
  readonly x: Float32Array;
  /** The model's velocity at x_t (after CFG), same length as x. */
  readonly v: Float32Array;
  /** σ of this step, in (0, 1]. */
  readonly sigma: number;
  /** σ' of the next step, in [0, σ). */
  readonly sigmaNext: number;
  /** The SDE noise scale of this step (flowGrpoStdDev), finite and > 0. */
  readonly stdDevT: number;
  /** Standard normal noise z (gaussianNoise of stream 1 + step): sample a new latent. */
  readonly noise?: Float32Array;
  /** A latent sampled before: recompute its log-prob under this velocity instead of sampling. */
  readonly prevSample?: Float32Array;
  /** Optional destinations (x's length) so the hot path allocates nothing; may alias x or v. */
  readonly out?: { readonly sample?: Float32Array; readonly mean?: Float32Array };
}

/** Outputs of one FlowGRPO SDE step. */
export interface FlowSdeStepResult {
  /** float32(μ + e·z), or `prevSample` itself when recomputing (copied when out.sample is given). */
  readonly sample: Float32Array;
  /** The step mean μ, rounded to float32. */
  readonly mean: Float32Array;
  /** Mean over all elements of the Gaussian log-density of the float32 sample, in float64. */
  readonly logProb: number;
  /** The step's standard deviation e = stdDevT·sqrt(σ − σ'). */
  readonly std: number;
}

function checkArgs(args: FlowSdeStepArgs): void {
  const { x, v, sigma, sigmaNext, stdDevT, noise, prevSample } = args;
  if (x.length === 0) throw invalidArgument('x', 'expected at least one element', 0);
  requireLength('v', v, x.length, 'x');
  if ((noise === undefined) === (prevSample === undefined)) {
    throw invalidArgument('noise', 'give exactly one of noise and prevSample');
  }
  if (noise !== undefined) requireLength('noise', noise, x.length, 'x');
  if (prevSample !== undefined) requireLength('prevSample', prevSample, x.length, 'x');
  if (typeof sigma !== 'number' || !(sigma > 0 && sigma <= 1)) {
    throw invalidArgument('sigma', 'expected σ in (0, 1]', sigma);
  }
  if (typeof sigmaNext !== 'number' || !(sigmaNext >= 0 && sigmaNext < sigma)) {
    throw invalidArgument('sigmaNext', `expected σ' in [0, σ = ${sigma})`, sigmaNext);
  }
  if (typeof stdDevT !== 'number' || !(stdDevT > 0 && Number.isFinite(stdDevT))) {
    throw invalidArgument('stdDevT', 'expected a finite number > 0', stdDevT);
  }
}

/**
 * One FlowGRPO SDE step with its log-probability (DESIGN.md §4, FlowGRPO's
 * `sde_step_with_logprob`). With Δ = σ' − σ and s = stdDevT:
 * μ = x·(1 + s²·Δ/(2σ)) + v·(1 + s²·(1 − σ)/(2σ))·Δ, e = s·sqrt(−Δ), sample = float32(μ + e·z), and
 * logProb = mean of −(sample − μ)²/(2e²) − ln e − ½ ln 2π, computed in float64 from the float32
 * sample. Given `prevSample` instead of `noise`, the same code path recomputes that sample's
 * log-prob, so the ratio is exactly 1 for the same velocity.
 *
 * @throws NUM_INVALID_ARGUMENT when not exactly one of noise/prevSample is given, lengths differ,
 *   x is empty, σ ∉ (0, 1], σ' ∉ [0, σ), or stdDevT is not a finite number > 0.
 */
export function flowSdeStep(args: FlowSdeStepArgs): FlowSdeStepResult {
  checkArgs(args);
  const { x, v, sigma, sigmaNext, stdDevT, noise, prevSample, out } = args;
  const n = x.length;
  const mean = outputArray(out?.mean, n);
  const given = prevSample ?? EMPTY;
  const sample =
    noise === undefined && out?.sample === undefined ? given : outputArray(out?.sample, n);
  const z = noise ?? EMPTY;

  const dt = sigmaNext - sigma;
  const variance = stdDevT * stdDevT;
  const coefX = 1 + (variance * dt) / (2 * sigma);
  const coefV = (1 + (variance * (1 - sigma)) / (2 * sigma)) * dt;
  const std = stdDevT * Math.sqrt(-dt);
  const sampling = noise !== undefined;

  let sumSquares = 0;
  for (let i = 0; i < n; i++) {
    // Read every input of element i before writing: outputs may alias x or v.
    const mu = (x[i] as number) * coefX + (v[i] as number) * coefV;
    const drawn = sampling ? Math.fround(mu + std * (z[i] as number)) : (given[i] as number);
    mean[i] = mu;
    sample[i] = drawn;
    const d = drawn - mu;
    sumSquares += d * d;
  }
  const logProb = -(sumSquares / n) / (2 * std * std) - Math.log(std) - HALF_LOG_TWO_PI;
  return { sample, mean, logProb, std };
}
