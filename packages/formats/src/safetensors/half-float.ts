// Conversions between the 16-bit float formats (kept as raw bit patterns in Uint16Array) and
// float32. Done on bit patterns, not through `number` arithmetic, so NaN payloads survive and
// every result is exact: widening is exact by construction; narrowing rounds to nearest, ties to
// even, as IEEE 754 and the ecosystem's converters (numpy, PyTorch) do.

function wordsOf(values: Float32Array): Uint32Array {
  return new Uint32Array(values.buffer, values.byteOffset, values.length);
}

function floatsOf(words: Uint32Array): Float32Array {
  return new Float32Array(words.buffer, words.byteOffset, words.length);
}

function float16BitsToFloat32Bits(h: number): number {
  const sign = (h & 0x8000) << 16;
  const exponent = (h >>> 10) & 0x1f;
  let mantissa = h & 0x3ff;
  if (exponent === 0x1f) return (sign | 0x7f800000 | (mantissa << 13)) >>> 0;
  if (exponent !== 0) return (sign | ((exponent + 112) << 23) | (mantissa << 13)) >>> 0;
  if (mantissa === 0) return sign >>> 0;
  // Subnormal: normalise so the leading 1 becomes the implicit bit.
  let e = 1;
  while ((mantissa & 0x400) === 0) {
    mantissa <<= 1;
    e--;
  }
  return (sign | ((e + 112) << 23) | ((mantissa & 0x3ff) << 13)) >>> 0;
}

function float32BitsToFloat16Bits(x: number): number {
  const sign = (x >>> 16) & 0x8000;
  const exponent = (x >>> 23) & 0xff;
  const mantissa = x & 0x7fffff;
  if (exponent === 0xff) {
    if (mantissa === 0) return sign | 0x7c00;
    // NaN: keep the payload's top bits, but never let it become infinity.
    return sign | 0x7c00 | (mantissa >>> 13 || 1);
  }
  const e = exponent - 112; // the binary16 biased exponent
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    // A binary16 subnormal (or zero): shift the 24-bit significand into 10 bits, rounding.
    if (e < -10) return sign;
    const significand = mantissa | 0x800000;
    const shift = 14 - e;
    let half = significand >>> shift;
    const rest = significand & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rest > halfway || (rest === halfway && (half & 1) === 1)) half++;
    return sign | half;
  }
  let half = sign | (e << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  // A carry out of the mantissa bumps the exponent; out of the top exponent it gives infinity.
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1)) half++;
  return half;
}

function float32BitsToBfloat16Bits(x: number): number {
  if ((x & 0x7f800000) === 0x7f800000 && (x & 0x7fffff) !== 0) {
    const truncated = x >>> 16;
    return (truncated & 0x7f) === 0 ? truncated | 1 : truncated;
  }
  const lsb = (x >>> 16) & 1;
  return ((x + 0x7fff + lsb) >>> 16) & 0xffff;
}

/** Widens IEEE 754 binary16 bit patterns to float32 (exact: every binary16 is a float32). */
export function float16ToFloat32(bits: Uint16Array): Float32Array {
  const out = new Uint32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = float16BitsToFloat32Bits(bits[i]!);
  return floatsOf(out);
}

/**
 * Narrows float32 values to binary16 bit patterns, rounding to nearest with ties to even;
 * magnitudes from 65520 up become ±infinity, NaN stays NaN (sign and top payload bits kept).
 */
export function float32ToFloat16(values: Float32Array): Uint16Array {
  const words = wordsOf(values);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < words.length; i++) out[i] = float32BitsToFloat16Bits(words[i]!);
  return out;
}

/** Widens bfloat16 bit patterns to float32 (exact: a bfloat16 is the top half of a float32). */
export function bfloat16ToFloat32(bits: Uint16Array): Float32Array {
  const out = new Uint32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = (bits[i]! << 16) >>> 0;
  return floatsOf(out);
}

/**
 * Narrows float32 values to bfloat16 bit patterns, rounding to nearest with ties to even; NaN
 * stays NaN (sign and top payload bits kept).
 */
export function float32ToBfloat16(values: Float32Array): Uint16Array {
  const words = wordsOf(values);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < words.length; i++) out[i] = float32BitsToBfloat16Bits(words[i]!);
  return out;
}
