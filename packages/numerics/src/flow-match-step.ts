import { outputArray, requireLength, requireSigma } from './argument-checks.js';

/**
 * One Euler (ODE) step of a flow-matching sampler: x' = x + (σ' − σ)·v in float64, each element
 * rounded to float32.
 *
 * @param out optional destination of x's length; may be `x` itself (element-wise, in place).
 * @throws NUM_INVALID_ARGUMENT when v (or out) differs in length from x, or σ or σ' is outside
 *   [0, 1].
 */
export function flowMatchStep(
  x: Float32Array,
  v: Float32Array,
  sigma: number,
  sigmaNext: number,
  out?: Float32Array,
): Float32Array {
  requireLength('v', v, x.length, 'x');
  requireSigma('sigma', sigma);
  requireSigma('sigmaNext', sigmaNext);
  const result = outputArray(out, x.length);
  const dt = sigmaNext - sigma;
  const n = x.length;
  for (let i = 0; i < n; i++) {
    result[i] = (x[i] as number) + dt * (v[i] as number);
  }
  return result;
}
