import { ComputePool, isSharedTensor, sharedFloat32Array } from '@flowfleet/platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loraScale } from './lora-config.js';
import { LoraMerger } from './lora-merger.js';
import { mergeLoraWeight, type LoraMergeInput } from './merge-lora.js';

function sameBits(a: Float32Array, b: Float32Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(
    Buffer.from(b.buffer, b.byteOffset, b.byteLength),
  );
}

function random(n: number, seed: number): Float32Array {
  let s = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 2 ** 32 - 0.5) * 0.2;
  }
  return out;
}

/** Like `random`, over 2^±20: sums of such products round, so their order shows in the bits. */
function wide(n: number, seed: number): Float32Array {
  const out = random(n, seed);
  for (let i = 0; i < n; i++) out[i]! *= 2 ** ((i * 7919 + seed) % 41) / 2 ** 20;
  return out;
}

const OUT = 24;
const IN = 40;
const RANK = 6;
const input: LoraMergeInput = {
  weight: random(OUT * IN, 1),
  down: random(RANK * IN, 2),
  up: random(OUT * RANK, 3),
  outFeatures: OUT,
  inFeatures: IN,
  rank: RANK,
  scale: loraScale(12, RANK, true),
};

let pool: ComputePool;
beforeAll(async () => {
  pool = await ComputePool.create({ threads: 2 });
});
afterAll(async () => {
  await pool.close();
});

describe('mergeLoraWeight', () => {
  it('is float32(W + float32(s · Σ_k B[i,k]·A[k,j])), the sum in float64 in k order', () => {
    const merged = mergeLoraWeight(input);
    for (const [i, j] of [
      [0, 0],
      [5, 17],
      [OUT - 1, IN - 1],
    ] as const) {
      let acc = 0;
      for (let k = 0; k < RANK; k++) acc += input.up[i * RANK + k]! * input.down[k * IN + j]!;
      const expected = Math.fround(input.weight[i * IN + j]! + Math.fround(input.scale * acc));
      expect(merged[i * IN + j]).toBe(expected);
    }
    expect(sameBits(merged, input.weight)).toBe(false);
    // B = 0 (a fresh PEFT adapter) leaves W as it is, bit for bit.
    expect(
      sameBits(mergeLoraWeight({ ...input, up: new Float32Array(OUT * RANK) }), input.weight),
    ).toBe(true);
  });

  it('gives the rule’s bits in every element, on shapes off its 2 × 4 blocks too', () => {
    for (const [out, n, rank] of [
      [OUT, IN, RANK],
      [7, 13, 5],
      [1, 3, 1],
      [9, 4, 2],
    ] as const) {
      const odd: LoraMergeInput = {
        weight: random(out * n, 4),
        down: wide(rank * n, 5),
        up: wide(out * rank, 6),
        outFeatures: out,
        inFeatures: n,
        rank,
        scale: 0.37,
      };
      const expected = new Float32Array(out * n);
      for (let i = 0; i < out; i++) {
        for (let j = 0; j < n; j++) {
          let acc = 0;
          for (let k = 0; k < rank; k++) acc += odd.up[i * rank + k]! * odd.down[k * n + j]!;
          expected[i * n + j] = Math.fround(odd.weight[i * n + j]! + Math.fround(odd.scale * acc));
        }
      }
      expect(sameBits(mergeLoraWeight(odd), expected), `${out}×${n} rank ${rank}`).toBe(true);
      // Products 2^-60, 1, -1 in every element: in ascending k the 2^-60 is lost to the 1 and Δ
      // is 0, so W (zeros) stays; any other order of the sum leaves 2^-60.
      const order: LoraMergeInput = {
        weight: new Float32Array(out * n),
        down: Float32Array.from(
          { length: 3 * n },
          (_, at) => [2 ** -30, 1, -1][Math.floor(at / n)]!,
        ),
        up: Float32Array.from({ length: out * 3 }, (_, at) => [2 ** -30, 1, 1][at % 3]!),
        outFeatures: out,
        inFeatures: n,
        rank: 3,
        scale: 1,
      };
      expect(
        mergeLoraWeight(order).every((v) => v === 0),
        `${out}×${n} order`,
      ).toBe(true);
    }
  });

  it('scales by alpha / r, or alpha / √r with rsLoRA', () => {
    expect(loraScale(64, 32, false)).toBe(2);
    expect(loraScale(64, 16, true)).toBe(16);
  });

  it('gives the same bits in a compute thread (LoraMerger) and leaves the inputs alone', async () => {
    const merger = await LoraMerger.attach(pool);
    const before = input.weight.slice();
    const merged = await Promise.all([merger.merge(input), merger.merge(input)]);
    for (const m of merged) expect(sameBits(m, mergeLoraWeight(input))).toBe(true);
    expect(sameBits(input.weight, before)).toBe(true);
    expect(input.down.byteLength).toBe(RANK * IN * 4);
  });

  it('merges a shared base (a resident version) without copying or touching it, into a new shared buffer', async () => {
    const merger = await LoraMerger.attach(pool);
    const weight = sharedFloat32Array(OUT * IN);
    weight.set(input.weight);
    const merged = await merger.merge({ ...input, weight });
    expect(sameBits(merged, mergeLoraWeight(input))).toBe(true);
    expect(sameBits(weight, input.weight)).toBe(true); // the base version is unchanged
    expect(merged.buffer).not.toBe(weight.buffer);
    expect(isSharedTensor({ dtype: 'float32', dims: [OUT, IN], data: merged })).toBe(true);
  });
});
