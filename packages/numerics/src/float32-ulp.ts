const f32 = new Float32Array(1);
const bits = new Int32Array(f32.buffer);

/** The float32 bit pattern of `value` mapped onto a line where adjacent floats differ by 1. */
function orderedFloat32(value: number): number {
  f32[0] = value;
  const word = bits[0] as number;
  // Negative floats have the sign bit set; mirror them below zero so -0 and +0 coincide.
  return word >= 0 ? word : -(word & 0x7fffffff);
}

/**
 * How many float32 steps apart `a` and `b` are, after rounding each to float32 (so a float32
 * written as its shortest decimal string compares equal to its exact value). 0 means equal
 * (+0 and −0 included); Infinity when exactly one is NaN; 0 when both are.
 */
export function float32UlpDistance(a: number, b: number): number {
  const aNaN = Number.isNaN(a);
  const bNaN = Number.isNaN(b);
  if (aNaN || bNaN) return aNaN && bNaN ? 0 : Infinity;
  return Math.abs(orderedFloat32(a) - orderedFloat32(b));
}
