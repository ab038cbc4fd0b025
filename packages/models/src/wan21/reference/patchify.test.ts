import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { patchify, unpatchify } from './patchify.js';
import type { LatentDims } from './patchify.js';

const shapes = fc
  .record({
    b: fc.integer({ min: 1, max: 2 }),
    c: fc.integer({ min: 1, max: 3 }),
    pt: fc.integer({ min: 1, max: 2 }),
    ph: fc.integer({ min: 1, max: 3 }),
    pw: fc.integer({ min: 1, max: 3 }),
    f: fc.integer({ min: 1, max: 3 }),
    h: fc.integer({ min: 1, max: 3 }),
    w: fc.integer({ min: 1, max: 3 }),
  })
  .map(({ b, c, pt, ph, pw, f, h, w }) => ({
    dims: [b, c, f * pt, h * ph, w * pw] as LatentDims,
    patch: [pt, ph, pw] as [number, number, number],
  }));

describe('patchify / unpatchify', () => {
  it('round-trips every latent (channel-last is the inverse of unpatchify)', () => {
    fc.assert(
      fc.property(shapes, ({ dims, patch }) => {
        const n = dims.reduce((a, b) => a * b, 1);
        const latent = Float32Array.from({ length: n }, (_, i) => i);
        const tokens = patchify(latent, dims, patch, 'channel-last');
        expect(unpatchify(tokens, dims, patch)).toEqual(latent);
        // channel-first is a permutation of the same values.
        const first = patchify(latent, dims, patch, 'channel-first');
        expect([...first].sort((a, b) => a - b)).toEqual([...latent]);
      }),
      { numRuns: 200 },
    );
  });

  it('orders tokens row-major over the grid and values as documented', () => {
    // [B=1, C=2, F=1, H=2, W=4], patch (1, 2, 2): grid (1, 1, 2), two tokens of 8 values.
    const latent = Float32Array.from({ length: 16 }, (_, i) => i);
    const dims: LatentDims = [1, 2, 1, 2, 4];
    // latent[c, 0, y, x] = c·8 + y·4 + x.
    expect([...patchify(latent, dims, [1, 2, 2], 'channel-first')]).toEqual([
      0,
      1,
      4,
      5,
      8,
      9,
      12,
      13, // token 0: c = 0 (j, k), then c = 1
      2,
      3,
      6,
      7,
      10,
      11,
      14,
      15,
    ]);
    expect([...patchify(latent, dims, [1, 2, 2], 'channel-last')]).toEqual([
      0,
      8,
      1,
      9,
      4,
      12,
      5,
      13, // token 0: (j, k) outer, c fastest
      2,
      10,
      3,
      11,
      6,
      14,
      7,
      15,
    ]);
  });
});
