import { describe, expect, it } from 'vitest';
import { gaussianNoise } from '@flowfleet/numerics';
import { attention, createAttentionScratch } from './attention.js';
import { linear } from './ops.js';

function naiveLinear(
  x: Float32Array,
  rows: number,
  inDim: number,
  w: Float32Array,
  b: Float32Array,
  outDim: number,
): Float32Array {
  const out = new Float32Array(rows * outDim);
  for (let r = 0; r < rows; r++) {
    for (let o = 0; o < outDim; o++) {
      let acc = 0;
      for (let i = 0; i < inDim; i++) acc += x[r * inDim + i]! * w[o * inDim + i]!;
      out[r * outDim + o] = acc + b[o]!;
    }
  }
  return out;
}

describe('linear', () => {
  it('equals the plain float64 loop bit for bit for every row/output tail', () => {
    for (const [rows, inDim, outDim] of [
      [1, 3, 1],
      [2, 5, 4],
      [3, 7, 6],
      [5, 16, 9],
      [4, 1, 7],
    ] as const) {
      const x = gaussianNoise(1, rows, rows * inDim);
      const w = gaussianNoise(2, outDim, outDim * inDim);
      const b = gaussianNoise(3, inDim, outDim);
      const out = new Float32Array(rows * outDim);
      linear(out, x, rows, inDim, w, b, outDim);
      expect(out, `${rows}x${inDim}x${outDim}`).toEqual(naiveLinear(x, rows, inDim, w, b, outDim));
    }
  });
});

describe('attention', () => {
  it('matches a direct softmax(qkᵀ/√d)v and is invariant to batching', () => {
    const heads = 2;
    const d = 6;
    const width = heads * d;
    const [queries, keys] = [5, 3];
    const q = gaussianNoise(1, 0, 2 * queries * width);
    const k = gaussianNoise(1, 1, 2 * keys * width);
    const v = gaussianNoise(1, 2, 2 * keys * width);
    const out = new Float32Array(2 * queries * width);
    attention(
      out,
      q,
      k,
      v,
      { batch: 2, queries, keys, heads, headDim: d },
      createAttentionScratch(queries, keys, d),
    );
    for (let b = 0; b < 2; b++) {
      for (let n = 0; n < queries; n++) {
        for (let h = 0; h < heads; h++) {
          const logits: number[] = [];
          for (let m = 0; m < keys; m++) {
            let s = 0;
            for (let j = 0; j < d; j++)
              s +=
                q[(b * queries + n) * width + h * d + j]! * k[(b * keys + m) * width + h * d + j]!;
            logits.push(s / Math.sqrt(d));
          }
          const e = logits.map((l) => Math.exp(l - Math.max(...logits)));
          const sum = e.reduce((a, c) => a + c, 0);
          for (let j = 0; j < d; j++) {
            const expected = e.reduce(
              (a, p, m) => a + (p / sum) * v[(b * keys + m) * width + h * d + j]!,
              0,
            );
            expect(out[(b * queries + n) * width + h * d + j]).toBeCloseTo(expected, 6);
          }
        }
      }
    }
    const second = new Float32Array(queries * width);
    attention(
      second,
      q.subarray(queries * width),
      k.subarray(keys * width),
      v.subarray(keys * width),
      { batch: 1, queries, keys, heads, headDim: d },
      createAttentionScratch(queries, keys, d),
    );
    expect(second).toEqual(out.subarray(queries * width));
  });
});
