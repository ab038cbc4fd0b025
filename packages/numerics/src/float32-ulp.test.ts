import { describe, expect, it } from 'vitest';
import { float32UlpDistance } from './float32-ulp.js';

function nextUp(value: number): number {
  const f = new Float32Array([value]);
  const bits = new Int32Array(f.buffer);
  bits[0] = value >= 0 ? bits[0]! + 1 : bits[0]! - 1;
  return f[0]!;
}

describe('float32UlpDistance', () => {
  it('counts float32 steps, across zero and between binades', () => {
    expect(float32UlpDistance(1, 1)).toBe(0);
    expect(float32UlpDistance(1, nextUp(1))).toBe(1);
    expect(float32UlpDistance(nextUp(nextUp(1)), 1)).toBe(2);
    expect(float32UlpDistance(0, -0)).toBe(0);
    const tiny = 2 ** -149;
    expect(float32UlpDistance(tiny, -tiny)).toBe(2);
    expect(float32UlpDistance(Math.fround(2 - 2 ** -23), 2)).toBe(1);
    expect(float32UlpDistance(-1, nextUp(-1))).toBe(1);
  });

  it('rounds both values to float32 first (shortest decimal strings compare equal)', () => {
    expect(float32UlpDistance(0.1, Math.fround(0.1))).toBe(0);
  });

  it('is Infinity when exactly one value is NaN', () => {
    expect(float32UlpDistance(Number.NaN, 1)).toBe(Infinity);
    expect(float32UlpDistance(Number.NaN, Number.NaN)).toBe(0);
  });
});
