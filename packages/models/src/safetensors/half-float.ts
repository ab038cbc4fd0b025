/** Decodes one IEEE 754 binary16 bit pattern (incl. subnormals, ±inf, NaN) to a number. */
export function float16BitsToNumber(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa === 0 ? sign * Infinity : NaN;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/** Decodes little-endian binary16 values to float32 (exact: every f16 is an f32). */
export function decodeFloat16(bytes: Uint8Array): Float32Array {
  const n = bytes.length >> 1;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    out[i] = float16BitsToNumber(bytes[2 * i]! | (bytes[2 * i + 1]! << 8));
  }
  return out;
}

/** Decodes little-endian bfloat16 values to float32 (the top 16 bits of an f32). */
export function decodeBfloat16(bytes: Uint8Array): Float32Array {
  const n = bytes.length >> 1;
  const words = new Uint32Array(n);
  for (let i = 0; i < n; i++) words[i] = ((bytes[2 * i]! | (bytes[2 * i + 1]! << 8)) << 16) >>> 0;
  return new Float32Array(words.buffer);
}
