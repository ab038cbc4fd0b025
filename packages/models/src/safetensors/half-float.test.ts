import { describe, expect, it } from 'vitest';
import { decodeBfloat16, decodeFloat16, float16BitsToNumber } from './half-float.js';

function le16(values: number[]): Uint8Array {
  const bytes = new Uint8Array(values.length * 2);
  values.forEach((v, i) => {
    bytes[2 * i] = v & 0xff;
    bytes[2 * i + 1] = v >> 8;
  });
  return bytes;
}

describe('float16 decoding', () => {
  it('decodes known binary16 patterns', () => {
    const cases: [number, number][] = [
      [0x0000, 0],
      [0x3c00, 1],
      [0xc000, -2],
      [0x3555, 0.333251953125],
      [0x7bff, 65504], // largest normal
      [0x0400, 2 ** -14], // smallest normal
      [0x0001, 2 ** -24], // smallest subnormal
      [0x03ff, 1023 * 2 ** -24], // largest subnormal
      [0x7c00, Infinity],
      [0xfc00, -Infinity],
    ];
    for (const [bits, value] of cases) expect(float16BitsToNumber(bits)).toBe(value);
    expect(Object.is(float16BitsToNumber(0x8000), -0)).toBe(true);
    expect(float16BitsToNumber(0x7e00)).toBeNaN();
    expect(float16BitsToNumber(0x7c01)).toBeNaN();
    const decoded = decodeFloat16(le16(cases.map(([bits]) => bits)));
    expect([...decoded]).toEqual(cases.map(([, value]) => value));
  });

  it('round-trips every finite float16 through float32 exactly', () => {
    const inexact: number[] = [];
    let finite = 0;
    for (let bits = 0; bits < 0x10000; bits++) {
      const v = float16BitsToNumber(bits);
      if (!Number.isFinite(v)) continue;
      finite++;
      if (Math.fround(v) !== v) inexact.push(bits);
    }
    expect(finite).toBe(0x10000 - 2 * 0x400); // all but the 2·1024 inf/NaN patterns
    expect(inexact).toEqual([]);
  });
});

describe('bfloat16 decoding', () => {
  it('decodes known bfloat16 patterns', () => {
    const cases: [number, number][] = [
      [0x3f80, 1],
      [0xc040, -3],
      [0x3eab, 0.333984375],
      [0x7f7f, 3.3895313892515355e38], // largest finite
      [0x0080, 2 ** -126], // smallest normal
      [0x0001, 2 ** -133], // smallest subnormal
      [0x7f80, Infinity],
      [0xff80, -Infinity],
    ];
    const decoded = decodeBfloat16(le16(cases.map(([bits]) => bits)));
    expect([...decoded]).toEqual(cases.map(([, value]) => value));
    expect(decodeBfloat16(le16([0x7fc0]))[0]).toBeNaN();
    expect(Object.is(decodeBfloat16(le16([0x8000]))[0], -0)).toBe(true);
  });
});
