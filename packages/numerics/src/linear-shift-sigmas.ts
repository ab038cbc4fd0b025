import { invalidArgument, requireIntegerIn } from './argument-checks.js';

/** Largest step count linearShiftSigmas accepts (a schedule, not a buffer size). */
export const MAX_SCHEDULE_STEPS = 1_000_000;

/**
 * The default `linear-shift` schedule (DESIGN.md §4): σ_i = shift·s / (1 + (shift − 1)·s) with
 * s = 1 − i/N for i = 0..N, so σ_0 = 1 and σ_N = 0. Timesteps are 1000·σ_i.
 *
 * @returns a Float64Array of length steps + 1.
 * @throws NUM_INVALID_ARGUMENT when steps is not an integer in [1, 10^6] or shift is not a finite
 *   number > 0.
 */
export function linearShiftSigmas(steps: number, shift: number): Float64Array {
  requireIntegerIn('steps', steps, 1, MAX_SCHEDULE_STEPS);
  if (typeof shift !== 'number' || !Number.isFinite(shift) || shift <= 0) {
    throw invalidArgument('shift', 'expected a finite number > 0', shift);
  }
  const sigmas = new Float64Array(steps + 1);
  // σ_0 is pinned to exactly 1: for some shifts (e.g. 0.05) the formula rounds to 1 − 8e-16, and
  // FlowGRPO's σ = 1 test (σ̃ = σ_1) would then miss and blow the noise scale up. σ_N is exactly 0.
  sigmas[0] = 1;
  for (let i = 1; i <= steps; i++) {
    const s = 1 - i / steps;
    sigmas[i] = (shift * s) / (1 + (shift - 1) * s);
  }
  return sigmas;
}
