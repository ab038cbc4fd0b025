import { invalidArgument, requireIntegerIn } from './argument-checks.js';

// Random123 Philox4x32 round multipliers, Weyl key increments and round count.
const PHILOX_M0 = 0xd2511f53;
const PHILOX_M1 = 0xcd9e8d57;
const PHILOX_W0 = 0x9e3779b9;
const PHILOX_W1 = 0xbb67ae85;
const PHILOX_ROUNDS = 10;

const TWO_POW_MINUS_32 = 1 / 4294967296;
const UINT32_MAX = 0xffffffff;

/**
 * High word of the exact 64-bit product of two uint32 values, given its low word
 * `lo = Math.imul(a, m) >>> 0`.
 *
 * Why this is exact: the float64 product `a·m` (< 2^64) is within 2^11 of the true product P,
 * and `P − lo` is exactly `hi·2^32`; subtracting `lo` adds at most another 2^11 of rounding, so
 * the scaled value lies within 2^-20 of the integer `hi` and rounding recovers it. This is
 * several times faster than BigInt; the tests check it against BigInt on random operands.
 */
export function mulHi32(a: number, m: number, lo: number): number {
  return Math.round((a * m - lo) * TWO_POW_MINUS_32);
}

function readWords(name: string, words: ArrayLike<number>, count: number): number[] {
  if (words === null || typeof words !== 'object' || words.length !== count) {
    throw invalidArgument(name, `expected ${count} uint32 words`, words?.length);
  }
  const result: number[] = [];
  for (let i = 0; i < count; i++) {
    const word = words[i] as number;
    requireIntegerIn(`${name}[${i}]`, word, 0, UINT32_MAX);
    result.push(word);
  }
  return result;
}

/**
 * The Philox4x32-10 block function of Random123: four uint32 counter words and two uint32 key
 * words in, four uint32 words out.
 *
 * @throws NUM_INVALID_ARGUMENT when counter is not 4 uint32 words or key is not 2.
 */
export function philox4x32x10(
  counter: ArrayLike<number>,
  key: ArrayLike<number>,
): [number, number, number, number] {
  let [c0, c1, c2, c3] = readWords('counter', counter, 4) as [number, number, number, number];
  let [k0, k1] = readWords('key', key, 2) as [number, number];
  // gaussianNoise inlines this same loop for speed; both are pinned to the same known answers.
  for (let round = 0; round < PHILOX_ROUNDS; round++) {
    const lo0 = Math.imul(c0, PHILOX_M0) >>> 0;
    const hi0 = mulHi32(c0, PHILOX_M0, lo0);
    const lo1 = Math.imul(c2, PHILOX_M1) >>> 0;
    const hi1 = mulHi32(c2, PHILOX_M1, lo1);
    c0 = (hi1 ^ c1 ^ k0) >>> 0;
    c1 = lo1;
    c2 = (hi0 ^ c3 ^ k1) >>> 0;
    c3 = lo0;
    k0 = (k0 + PHILOX_W0) >>> 0;
    k1 = (k1 + PHILOX_W1) >>> 0;
  }
  return [c0, c1, c2, c3];
}
