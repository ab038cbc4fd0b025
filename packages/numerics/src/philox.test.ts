import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mulHi32, philox4x32x10 } from './philox.js';

// Random123's kat_vectors for philox4x32_10 (written here in hex, independently of the golden file).
const RANDOM123_KATS = [
  {
    ctr: [0, 0, 0, 0],
    key: [0, 0],
    out: [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8],
  },
  {
    ctr: [0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff],
    key: [0xffffffff, 0xffffffff],
    out: [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd],
  },
  {
    ctr: [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
    key: [0xa4093822, 0x299f31d0],
    out: [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1],
  },
];

describe('philox4x32x10', () => {
  it('reproduces the Random123 known answers', () => {
    for (const kat of RANDOM123_KATS) {
      expect(philox4x32x10(kat.ctr, kat.key)).toEqual(kat.out);
    }
  });

  it('accepts typed arrays and leaves its inputs alone', () => {
    const counter = Uint32Array.from(RANDOM123_KATS[2]!.ctr);
    const key = Uint32Array.from(RANDOM123_KATS[2]!.key);
    expect(philox4x32x10(counter, key)).toEqual(RANDOM123_KATS[2]!.out);
    expect([...counter]).toEqual(RANDOM123_KATS[2]!.ctr);
  });

  it('rejects counters and keys that are not uint32 words with NUM_INVALID_ARGUMENT', () => {
    const bad: [number[], number[]][] = [
      [
        [0, 0, 0],
        [0, 0],
      ],
      [[0, 0, 0, 0], [0]],
      [
        [0, 0, 0, -1],
        [0, 0],
      ],
      [
        [0, 0, 0, 2 ** 32],
        [0, 0],
      ],
      [
        [0, 0.5, 0, 0],
        [0, 0],
      ],
      [
        [0, 0, 0, 0],
        [0, Number.NaN],
      ],
    ];
    for (const [counter, key] of bad) {
      expect(() => philox4x32x10(counter, key)).toThrow(
        expect.objectContaining({ code: 'NUM_INVALID_ARGUMENT' }),
      );
    }
  });
});

describe('mulHi32', () => {
  const uint32 = fc.integer({ min: 0, max: 0xffffffff });

  it('equals the exact high word of the 64-bit product (BigInt) for any uint32 operands', () => {
    const check = (a: number, m: number) => {
      const exact = Number((BigInt(a) * BigInt(m)) >> 32n);
      expect(mulHi32(a, m, Math.imul(a, m) >>> 0)).toBe(exact);
    };
    for (const edge of [0, 1, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xffffffff]) {
      for (const m of [0xd2511f53, 0xcd9e8d57, 0xffffffff, edge]) check(edge, m);
    }
    fc.assert(
      fc.property(uint32, uint32, (a, m) => check(a, m)),
      { numRuns: 2000 },
    );
  });
});
