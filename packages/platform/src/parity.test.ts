import { describe, expect, it } from 'vitest';
import { bitIdentical, firstBitDifference, within } from './parity.js';

/** A float32 NaN with a chosen payload. */
function nan32(payload: number): number {
  const words = new Uint32Array([0x7fc00000 | payload]);
  return new Float32Array(words.buffer)[0] ?? 0;
}

function withNanPayload(payload: number): Float32Array {
  const array = new Float32Array(3);
  new Uint32Array(array.buffer)[1] = 0x7fc00000 | payload;
  return array;
}

describe('bitIdentical', () => {
  it('compares bit patterns: NaN payloads and the sign of zero count', () => {
    expect(Number.isNaN(nan32(1))).toBe(true);
    expect(bitIdentical(withNanPayload(1), withNanPayload(1))).toBe(true);
    expect(bitIdentical(withNanPayload(1), withNanPayload(2))).toBe(false);
    expect(firstBitDifference(withNanPayload(1), withNanPayload(2))).toBe(1);
    expect(bitIdentical(new Float32Array([0]), new Float32Array([-0]))).toBe(false);
    expect(bitIdentical(new Float64Array([1, -0]), new Float64Array([1, -0]))).toBe(true);
    expect(
      firstBitDifference(new Float64Array([1, 2, 3]), new Float64Array([1, 2, 3 + 2 ** -51])),
    ).toBe(2);
  });

  it('respects subarray offsets', () => {
    const whole = new Float32Array([9, 1, 2]);
    expect(bitIdentical(whole.subarray(1), new Float32Array([1, 2]))).toBe(true);
  });

  it('throws PLAT_PARITY_SHAPE on a length or element-type mismatch', () => {
    const shape = expect.objectContaining({ code: 'PLAT_PARITY_SHAPE' });
    expect(() => bitIdentical(new Float32Array(2), new Float32Array(3))).toThrow(shape);
    expect(() => bitIdentical(new Float32Array(2), new Float64Array(2))).toThrow(shape);
  });
});

describe('within', () => {
  const a = new Float32Array([1, 100, 0]);
  const b = new Float32Array([1.001, 100.05, 0]);

  it('reports max-abs, max-rel and the worst index', () => {
    const result = within(a, b);
    expect(result.passed).toBe(false);
    expect(result.maxAbs).toBeCloseTo(0.05, 4);
    expect(result.maxRel).toBeCloseTo(0.001 / 1.001, 5); // from index 0, not the worst-abs index
    expect(result.index).toBe(1);
  });

  it('passes when max-abs ≤ atol or max-rel ≤ rtol', () => {
    expect(within(a, b, { atol: 0.051 }).passed).toBe(true);
    expect(within(a, b, { rtol: 1e-3 }).passed).toBe(true);
    expect(within(a, b, { atol: 0.04, rtol: 9e-4 }).passed).toBe(false);
  });

  it('treats equal NaNs and infinities as equal and a NaN against a number as a failure', () => {
    const equal = within(new Float64Array([NaN, Infinity]), new Float64Array([NaN, Infinity]));
    expect(equal).toEqual({ passed: true, maxAbs: 0, maxRel: 0, index: -1 });
    const bad = within(new Float32Array([0, NaN]), new Float32Array([0, 1]), {
      rtol: 1,
      atol: 1e9,
    });
    expect(bad).toMatchObject({ passed: false, maxAbs: Infinity, index: 1 });
  });

  it('compares float32 against a float64 reference but not different lengths', () => {
    expect(within(new Float32Array([0.5]), new Float64Array([0.5])).passed).toBe(true);
    expect(() => within(new Float32Array(2), new Float32Array(1))).toThrow(
      expect.objectContaining({ code: 'PLAT_PARITY_SHAPE' }),
    );
  });
});
