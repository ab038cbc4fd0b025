import { invalidArgument, requireIntegerIn } from './argument-checks.js';

/**
 * FlowGRPO's SDE noise scale for step `step` of a sigma table (DESIGN.md §4):
 * `a·sqrt(σ / (1 − σ̃))` with σ = sigmas[step], σ̃ = sigmas[1] when σ = 1 (else σ), a = noiseLevel.
 *
 * @throws NUM_INVALID_ARGUMENT when sigmas has fewer than 2 entries, step is not an index in
 *   [0, sigmas.length − 2] (a step needs σ and σ'), σ is outside (0, 1], σ̃ is not below 1, or
 *   noiseLevel is not a finite number ≥ 0.
 */
export function flowGrpoStdDev(
  sigmas: ArrayLike<number>,
  step: number,
  noiseLevel: number,
): number {
  if (sigmas.length < 2) {
    throw invalidArgument('sigmas', 'expected at least 2 entries (σ and σ′)', sigmas.length);
  }
  requireIntegerIn('step', step, 0, sigmas.length - 2);
  if (typeof noiseLevel !== 'number' || !Number.isFinite(noiseLevel) || noiseLevel < 0) {
    throw invalidArgument('noiseLevel', 'expected a finite number ≥ 0', noiseLevel);
  }
  const sigma = sigmas[step] as number;
  if (!(sigma > 0 && sigma <= 1)) {
    throw invalidArgument(`sigmas[${step}]`, 'expected σ in (0, 1]', sigma);
  }
  const sigmaTilde = sigma === 1 ? (sigmas[1] as number) : sigma;
  if (!(sigmaTilde >= 0 && sigmaTilde < 1)) {
    throw invalidArgument('sigmas[1]', 'expected σ_1 in [0, 1) (used when σ = 1)', sigmaTilde);
  }
  return Math.sqrt(sigma / (1 - sigmaTilde)) * noiseLevel;
}
