import { describe, expect, it } from 'vitest';
import { ropeAxisPairs, ropeTables } from './rope-tables.js';
import { WAN21_1_3B, WAN21_MINI } from './wan21-config.js';

describe('ropeTables', () => {
  it('splits the rotary pairs as Wan does', () => {
    expect(ropeAxisPairs(WAN21_MINI)).toEqual([6, 5, 5]); // d = 32
    // d = 128: Wan's rope_params(d − 4·⌊d/6⌋) for F, (2·⌊d/6⌋) for H and W → 22, 21, 21 pairs.
    expect(ropeAxisPairs(WAN21_1_3B)).toEqual([22, 21, 21]);
  });

  it('matches the direct formula for chosen tokens', () => {
    const grid = { f: 3, h: 4, w: 5 };
    const { cos, sin } = ropeTables(WAN21_MINI, grid);
    const half = 16;
    expect(cos.length).toBe(3 * 4 * 5 * half);
    for (const [fi, hi, wi] of [
      [0, 0, 0],
      [2, 3, 4],
      [1, 2, 0],
    ] as const) {
      const n = (fi * 4 + hi) * 5 + wi;
      const expected: number[] = [];
      for (let k = 0; k < 6; k++) expected.push(fi * 10000 ** (-(2 * k) / 12));
      for (let k = 0; k < 5; k++) expected.push(hi * 10000 ** (-(2 * k) / 10));
      for (let k = 0; k < 5; k++) expected.push(wi * 10000 ** (-(2 * k) / 10));
      for (let m = 0; m < half; m++) {
        expect(cos[n * half + m]).toBe(Math.fround(Math.cos(expected[m]!)));
        expect(sin[n * half + m]).toBe(Math.fround(Math.sin(expected[m]!)));
      }
    }
  });

  it('is the identity rotation for the first token', () => {
    const { cos, sin } = ropeTables(WAN21_MINI, { f: 1, h: 1, w: 1 });
    expect([...cos]).toEqual(new Array(16).fill(1));
    expect([...sin]).toEqual(new Array(16).fill(0));
  });
});
