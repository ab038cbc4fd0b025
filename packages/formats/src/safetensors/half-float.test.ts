import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bfloat16ToFloat32,
  float16ToFloat32,
  float32ToBfloat16,
  float32ToFloat16,
} from './half-float.js';

const ALL_PATTERNS = Uint16Array.from({ length: 0x10000 }, (_, i) => i);

function f32(bits: number): number {
  return new Float32Array(new Uint32Array([bits]).buffer)[0]!;
}

/** Checks that `result` is a nearest 16-bit value to `x`, with ties to an even pattern. */
function expectNearestEven(x: number, result: number, widen: (bits: Uint16Array) => Float32Array) {
  const value = widen(Uint16Array.of(result))[0]!;
  const error = Math.abs(value - x);
  for (const neighbour of [result - 1, result + 1]) {
    // Stay within the same sign and below the infinity pattern.
    if ((neighbour & 0x7fff) === 0x7fff || neighbour >>> 15 !== result >>> 15) continue;
    const other = widen(Uint16Array.of(neighbour))[0]!;
    if (!Number.isFinite(other)) continue;
    const otherError = Math.abs(other - x);
    expect(otherError).toBeGreaterThanOrEqual(error);
    if (otherError === error) expect(result & 1).toBe(0);
  }
}

describe('binary16', () => {
  it('widens every pattern exactly and narrows it back to the same pattern', () => {
    const widened = float16ToFloat32(ALL_PATTERNS);
    expect(Array.from(float32ToFloat16(widened))).toEqual(Array.from(ALL_PATTERNS));
  });

  it('widens known values', () => {
    const bits = Uint16Array.of(0x3c00, 0xc000, 0x0001, 0x03ff, 0x7bff, 0x7c00, 0xfc00, 0x8000);
    expect(Array.from(float16ToFloat32(bits))).toEqual([
      1,
      -2,
      2 ** -24,
      1023 * 2 ** -24,
      65504,
      Infinity,
      -Infinity,
      -0,
    ]);
    expect(Number.isNaN(float16ToFloat32(Uint16Array.of(0x7e00))[0])).toBe(true);
  });

  it('rounds to nearest, ties to even, overflowing to infinity from 65520', () => {
    const values = Float32Array.of(
      65519.99,
      65520,
      1 + 2 ** -11,
      1 + 3 * 2 ** -11,
      2 ** -25,
      2 ** -25 * 1.5,
    );
    expect(Array.from(float32ToFloat16(values))).toEqual([
      0x7bff, 0x7c00, 0x3c00, 0x3c02, 0x0000, 0x0001,
    ]);
  });

  it('is a nearest-even rounding for any float32 (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (bits) => {
        const x = f32(bits);
        fc.pre(Number.isFinite(x));
        const [result] = float32ToFloat16(Float32Array.of(x));
        if (Math.abs(x) >= 65520) expect(result! & 0x7fff).toBe(0x7c00);
        else expectNearestEven(x, result!, float16ToFloat32);
      }),
      { numRuns: 20_000 },
    );
  });

  it('keeps NaN a NaN even when its payload does not fit', () => {
    const nan = new Float32Array(new Uint32Array([0x7f800001, 0xffc00000]).buffer);
    const bits = Array.from(float32ToFloat16(nan));
    expect(bits.map((b) => (b & 0x7c00) === 0x7c00 && (b & 0x3ff) !== 0)).toEqual([true, true]);
    expect(bits[1]! >>> 15).toBe(1);
  });
});

describe('bfloat16', () => {
  it('widens every pattern exactly and narrows it back to the same pattern', () => {
    const widened = bfloat16ToFloat32(ALL_PATTERNS);
    expect(Array.from(float32ToBfloat16(widened))).toEqual(Array.from(ALL_PATTERNS));
  });

  it('is a nearest-even rounding for any finite float32 (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (bits) => {
        const x = f32(bits);
        fc.pre(Number.isFinite(x));
        const [result] = float32ToBfloat16(Float32Array.of(x));
        const value = bfloat16ToFloat32(Uint16Array.of(result!))[0]!;
        if (Number.isFinite(value)) expectNearestEven(x, result!, bfloat16ToFloat32);
        else expect(Math.abs(x)).toBeGreaterThan(f32(0x7f7f0000));
      }),
      { numRuns: 20_000 },
    );
  });

  it('rounds a tie to the even pattern', () => {
    expect(
      Array.from(float32ToBfloat16(Float32Array.of(f32(0x3f808000), f32(0x3f818000)))),
    ).toEqual([0x3f80, 0x3f82]);
  });
});
