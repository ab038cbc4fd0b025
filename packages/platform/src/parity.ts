import { FlowfleetError } from '@flowfleet/errors';

/** The float arrays the parity ladder compares. */
export type FloatArray = Float32Array | Float64Array;

/** A tolerance: a comparison passes if max-abs ≤ atol or max-rel ≤ rtol (both default 0). */
export interface ParityTolerance {
  readonly rtol?: number;
  readonly atol?: number;
}

/** The verdict of `within`. */
export interface WithinResult {
  readonly passed: boolean;
  readonly maxAbs: number;
  readonly maxRel: number;
  /** Index of the largest absolute difference (the first, on ties); -1 when all are equal. */
  readonly index: number;
}

/** @throws FlowfleetError PLAT_PARITY_SHAPE */
export function assertSameShape(a: FloatArray, b: FloatArray): void {
  if (a.length !== b.length || a.BYTES_PER_ELEMENT !== b.BYTES_PER_ELEMENT) {
    throw new FlowfleetError(
      'PLAT_PARITY_SHAPE',
      `cannot compare ${a.constructor.name}(${a.length}) with ${b.constructor.name}(${b.length})`,
      {
        details: {
          lengthA: a.length,
          lengthB: b.length,
          typeA: a.constructor.name,
          typeB: b.constructor.name,
        },
      },
    );
  }
}

function words(array: FloatArray): Uint32Array {
  return new Uint32Array(array.buffer, array.byteOffset, array.byteLength / 4);
}

/**
 * The first element whose bit pattern differs (NaN payloads and ±0 count), or -1.
 * @throws FlowfleetError PLAT_PARITY_SHAPE on a length or element-type mismatch
 */
export function firstBitDifference(a: FloatArray, b: FloatArray): number {
  assertSameShape(a, b);
  const wa = words(a);
  const wb = words(b);
  const wordsPerElement = a.BYTES_PER_ELEMENT / 4;
  for (let i = 0; i < wa.length; i++) {
    if (wa[i] !== wb[i]) return Math.floor(i / wordsPerElement);
  }
  return -1;
}

/**
 * True when `a` and `b` hold the same bit patterns (so NaN payloads and ±0 must match too).
 * @throws FlowfleetError PLAT_PARITY_SHAPE on a length or element-type mismatch
 */
export function bitIdentical(a: FloatArray, b: FloatArray): boolean {
  return firstBitDifference(a, b) === -1;
}

/** Absolute and relative difference of two numbers; NaN vs number is infinitely far apart. */
export function elementDifference(x: number, y: number): { abs: number; rel: number } {
  if (x === y || (Number.isNaN(x) && Number.isNaN(y))) return { abs: 0, rel: 0 };
  const abs = Math.abs(x - y);
  if (!Number.isFinite(abs)) return { abs: Infinity, rel: Infinity };
  return { abs, rel: abs / Math.max(Math.abs(x), Math.abs(y)) };
}

/**
 * Compares two arrays within a tolerance: passes if max-abs ≤ atol or max-rel ≤ rtol, where the
 * relative difference of an element is |a−b| / max(|a|, |b|). Equal NaNs and equal infinities
 * count as equal; a NaN against a number fails.
 * @throws FlowfleetError PLAT_PARITY_SHAPE on a length mismatch
 */
export function within(
  a: FloatArray,
  b: FloatArray,
  tolerance: ParityTolerance = {},
): WithinResult {
  if (a.length !== b.length) assertSameShape(a, b);
  const { rtol = 0, atol = 0 } = tolerance;
  let maxAbs = 0;
  let maxRel = 0;
  let index = -1;
  for (let i = 0; i < a.length; i++) {
    const { abs, rel } = elementDifference(a[i] ?? 0, b[i] ?? 0);
    if (abs > maxAbs) {
      maxAbs = abs;
      index = i;
    }
    if (rel > maxRel) maxRel = rel;
  }
  return { passed: maxAbs <= atol || maxRel <= rtol, maxAbs, maxRel, index };
}
