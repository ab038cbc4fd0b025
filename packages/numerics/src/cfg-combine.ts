import { outputArray, requireFinite, requireLength } from './argument-checks.js';

/**
 * Classifier-free guidance: v = v_u + w·(v_c − v_u) in float64, each element rounded to float32.
 *
 * @param out optional destination of uncond's length; may alias either input.
 * @throws NUM_INVALID_ARGUMENT when cond (or out) differs in length from uncond, or scale is not
 *   finite.
 */
export function cfgCombine(
  uncond: Float32Array,
  cond: Float32Array,
  scale: number,
  out?: Float32Array,
): Float32Array {
  requireLength('cond', cond, uncond.length, 'uncond');
  requireFinite('scale', scale);
  const result = outputArray(out, uncond.length);
  const n = uncond.length;
  for (let i = 0; i < n; i++) {
    const u = uncond[i] as number;
    result[i] = u + scale * ((cond[i] as number) - u);
  }
  return result;
}
