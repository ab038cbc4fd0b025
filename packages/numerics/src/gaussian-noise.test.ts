import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gaussianNoise } from './gaussian-noise.js';
import { philox4x32x10 } from './philox.js';

const TWO_POW_32 = 2 ** 32;
const seedArb = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
const streamArb = fc.integer({ min: 0, max: 0xffffffff });

/** NoiseSpec v1 written out literally from DESIGN.md §4, one Philox block at a time. */
function referenceNoise(seed: number, stream: number, n: number): Float32Array {
  const key = [seed % TWO_POW_32, Math.floor(seed / TWO_POW_32)];
  const out = new Float32Array(n);
  for (let j = 0; 4 * j < n; j++) {
    const [w0, w1, w2, w3] = philox4x32x10(
      [j % TWO_POW_32, Math.floor(j / TWO_POW_32), stream, 0],
      key,
    );
    const values: number[] = [];
    for (const [a, b] of [
      [w0, w1],
      [w2, w3],
    ] as const) {
      const u1 = (a + 1) * 2 ** -32;
      const u2 = b * 2 ** -32;
      const r = Math.sqrt(-2 * Math.log(u1));
      const theta = 2 * Math.PI * u2;
      values.push(r * Math.cos(theta), r * Math.sin(theta));
    }
    values.forEach((value, t) => {
      if (4 * j + t < n) out[4 * j + t] = Math.fround(value);
    });
  }
  return out;
}

function differs(a: Float32Array, b: Float32Array): boolean {
  return a.some((value, i) => value !== b[i]);
}

describe('gaussianNoise', () => {
  it('follows the NoiseSpec v1 counter/key layout and Box–Muller exactly', () => {
    fc.assert(
      fc.property(seedArb, streamArb, fc.integer({ min: 0, max: 23 }), (seed, stream, n) => {
        expect(gaussianNoise(seed, stream, n)).toEqual(referenceNoise(seed, stream, n));
      }),
      { numRuns: 200 },
    );
  });

  it('is a prefix of a longer draw with the same seed and stream', () => {
    fc.assert(
      fc.property(
        seedArb,
        streamArb,
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 1, max: 40 }),
        (seed, stream, n, k) => {
          const longer = gaussianNoise(seed, stream, n + k);
          expect(gaussianNoise(seed, stream, n)).toEqual(longer.subarray(0, n));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('gives other noise for another stream or another seed', () => {
    fc.assert(
      fc.property(seedArb, streamArb, streamArb, (seed, a, b) => {
        fc.pre(a !== b);
        expect(differs(gaussianNoise(seed, a, 8), gaussianNoise(seed, b, 8))).toBe(true);
      }),
      { numRuns: 200 },
    );
    fc.assert(
      fc.property(seedArb, seedArb, streamArb, (s, t, stream) => {
        fc.pre(s !== t);
        expect(differs(gaussianNoise(s, stream, 8), gaussianNoise(t, stream, 8))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('uses the high key word: seed and seed + 2^32 give other noise', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER - TWO_POW_32 }),
        streamArb,
        (seed, stream) => {
          const low = gaussianNoise(seed, stream, 8);
          expect(differs(low, gaussianNoise(seed + TWO_POW_32, stream, 8))).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
    // And the largest seed is accepted and differs from its low word alone.
    const max = Number.MAX_SAFE_INTEGER;
    expect(differs(gaussianNoise(max, 0, 8), gaussianNoise(max % TWO_POW_32, 0, 8))).toBe(true);
  });

  it('has standard-normal moments over 10^6 draws, at bounds that can fail', () => {
    const n = 1_000_000;
    const z = gaussianNoise(20261130, 1, n);
    let sum = 0;
    for (const value of z) sum += value;
    const mean = sum / n;
    let m2 = 0;
    let m4 = 0;
    for (const value of z) {
      const d = (value - mean) ** 2;
      m2 += d;
      m4 += d * d;
    }
    const variance = m2 / n;
    const kurtosis = m4 / n / (variance * variance);
    expect(Math.abs(mean)).toBeLessThan(5 / Math.sqrt(n));
    expect(Math.abs(variance - 1)).toBeLessThan(5 * Math.sqrt(2 / n));
    // The sample kurtosis of a normal has standard error sqrt(24/n) ≈ 0.005.
    expect(Math.abs(kurtosis - 3)).toBeLessThan(5 * Math.sqrt(24 / n));
    expect(z.every((value) => Number.isFinite(value))).toBe(true);
  });

  it('draws 10^6 values at the cost of a few transcendental calls each (no BigInt-class slowdown)', () => {
    // Relative to a baseline measured in the same run, so a loaded machine slows both alike.
    // Box–Muller alone needs 0.5·10^6 log/sqrt and 10^6 cos/sin; Philox adds about as much again
    // (measured: ~65 ms vs ~30 ms on the 2-core box). A BigInt multiply-hi would be ~20× slower.
    const n = 1_000_000;
    const out = new Float32Array(n);
    const bestOf = (fn: () => void) => {
      let best = Infinity;
      for (let run = 0; run < 3; run++) {
        const start = performance.now();
        fn();
        best = Math.min(best, performance.now() - start);
      }
      return best;
    };
    let sink = 0;
    const baseline = bestOf(() => {
      for (let i = 0; i < n / 2; i++) {
        const r = Math.sqrt(-2 * Math.log((i + 1) / n));
        const theta = (2 * Math.PI * i) / n;
        sink += r * Math.cos(theta) + r * Math.sin(theta);
      }
    });
    const noise = bestOf(() => gaussianNoise(12345, 1, n, out));
    expect(Number.isFinite(sink)).toBe(true);
    expect(noise).toBeLessThan(8 * baseline);
  });

  it('writes into `out` without allocating and returns it', () => {
    const out = new Float32Array(10);
    expect(gaussianNoise(7, 3, 10, out)).toBe(out);
    expect(out).toEqual(gaussianNoise(7, 3, 10));
    expect(gaussianNoise(7, 3, 0)).toEqual(new Float32Array(0));
  });

  it('rejects arguments outside the contract with NUM_INVALID_ARGUMENT', () => {
    const calls = [
      () => gaussianNoise(-1, 0, 4),
      () => gaussianNoise(2 ** 53, 0, 4),
      () => gaussianNoise(1.5, 0, 4),
      () => gaussianNoise(Number.NaN, 0, 4),
      () => gaussianNoise(1, -1, 4),
      () => gaussianNoise(1, 2 ** 32, 4),
      () => gaussianNoise(1, 0.5, 4),
      () => gaussianNoise(1, 0, -1),
      () => gaussianNoise(1, 0, 2.5),
      () => gaussianNoise(1, 0, 4, new Float32Array(3)),
    ];
    for (const call of calls) {
      expect(call).toThrow(expect.objectContaining({ code: 'NUM_INVALID_ARGUMENT' }));
    }
  });
});
