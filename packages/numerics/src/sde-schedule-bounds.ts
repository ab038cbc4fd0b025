import { flowGrpoStdDev } from './flow-grpo-std-dev.js';

/**
 * The smallest step noise e = stdDevT·sqrt(σ − σ') an SDE step may have: 2^-11. A latent of
 * magnitude below 8 is rounded to float32 by at most 2^-22 (half an ulp in [4, 8)), so with
 * e ≥ 2^-11 the rounding of `sample = float32(μ + e·z)` moves the log-prob's `(sample − μ)/e` by
 * at most 2^-11: the log-prob measures the noise, not the rounding. (Below it the log-prob is
 * dominated by rounding, and once e² underflows it is −∞.)
 */
export const SDE_MIN_STEP_STD = 2 ** -11;

/**
 * The noise levels a FlowGRPO SDE step can survive at σ = 1 (every linear-shift schedule starts
 * there): there e = a exactly, so a ≥ SDE_MIN_STEP_STD; and the mean's coefficient on x is
 * 1 − a²/2, so a ≤ 2 keeps it in [−1, 1] (see {@link sdeScheduleIssue}).
 */
export const NOISE_LEVEL_RANGE = Object.freeze({ min: SDE_MIN_STEP_STD, max: 2 });

/**
 * The linear-shift shifts a schedule may use. Below 2^-12 the last step's noise of any SDE
 * schedule with N ≥ 2 steps and a ≤ 2 is e ≈ a·σ_{N−1} ≤ 2·shift < SDE_MIN_STEP_STD, and the
 * sigmas after σ_0 crowd into the subnormal range as shift → 0 (shift = 5e-324 gives σ_i that are
 * not strictly decreasing); above 100 σ_1 sits within 1/(100·N) of 1.
 */
export const SHIFT_RANGE = Object.freeze({ min: 2 ** -12, max: 100 });

/** Which bound a step breaks. */
export type SdeScheduleRule = 'noise_floor' | 'mean_gain';

/** The first SDE step of a schedule that the float32 numerics would not survive. */
export interface SdeScheduleIssue {
  readonly step: number;
  readonly rule: SdeScheduleRule;
  /** The step noise e = stdDevT·sqrt(σ − σ'). */
  readonly std: number;
  /** The mean's coefficient on x: 1 + stdDevT²·(σ' − σ)/(2σ). */
  readonly coefX: number;
  readonly message: string;
}

/**
 * Checks every step of an SDE schedule against the two bounds of the FlowGRPO step
 * (DESIGN.md §4), in float64 as `flowSdeStep` computes them:
 * - `noise_floor`: e_i ≥ {@link SDE_MIN_STEP_STD};
 * - `mean_gain`: the mean's coefficient on x, 1 + stdDevT_i²·Δ_i/(2σ_i) (never above 1), is at
 *   least −1, so no step amplifies the latent (a step that does, repeated, grows it
 *   geometrically until float32 overflows). Equivalently a²·(σ_i − σ_{i+1}) ≤ 4·(1 − σ̃_i).
 * `sigmas` must already be a valid schedule (σ_0 ∈ (0, 1], strictly decreasing to ≥ 0, σ_1 < 1).
 * @returns the first step that breaks a bound, or undefined when every step is within both.
 * @throws NUM_INVALID_ARGUMENT when the schedule or noise level is outside flowGrpoStdDev's domain
 */
export function sdeScheduleIssue(
  sigmas: ArrayLike<number>,
  noiseLevel: number,
): SdeScheduleIssue | undefined {
  for (let step = 0; step + 1 < sigmas.length; step++) {
    const sigma = sigmas[step] as number;
    const dt = (sigmas[step + 1] as number) - sigma;
    const stdDevT = flowGrpoStdDev(sigmas, step, noiseLevel);
    const std = stdDevT * Math.sqrt(-dt);
    const coefX = 1 + (stdDevT * stdDevT * dt) / (2 * sigma);
    if (!(std >= SDE_MIN_STEP_STD)) {
      return {
        step,
        rule: 'noise_floor',
        std,
        coefX,
        message: `step ${step} has noise std ${std.toPrecision(3)} < 2^-11, below what float32 latents resolve (raise noiseLevel or shift, or use fewer steps)`,
      };
    }
    if (!(coefX >= -1)) {
      return {
        step,
        rule: 'mean_gain',
        std,
        coefX,
        message: `step ${step} multiplies the latent by ${coefX.toPrecision(3)} (|·| > 1: the trajectory would grow geometrically; lower noiseLevel or shift, or use more steps)`,
      };
    }
  }
  return undefined;
}
