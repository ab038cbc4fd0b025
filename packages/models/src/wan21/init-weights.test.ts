import { describe, expect, it } from 'vitest';
import { gaussianNoise } from '@flowfleet/numerics';
import { isSharedTensor, type TensorData } from '@flowfleet/platform';
import { TEXT_ENCODER_STREAM_BASE, initWeights } from './init-weights.js';
import { parameterShapes, textEncoderParameterShapes } from './parameter-shapes.js';
import { WAN21_MINI } from './wan21-config.js';

/** Bit-for-bit equality of two typed arrays (fast: compares bytes, not elements). */
function sameBits(a: ArrayBufferView, b: ArrayBufferView): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(
    Buffer.from(b.buffer, b.byteOffset, b.byteLength),
  );
}

function stats(data: TensorData['data']): { mean: number; std: number } {
  let s = 0;
  let s2 = 0;
  for (const value of data as Float32Array) {
    s += value;
    s2 += value * value;
  }
  const mean = s / data.length;
  return { mean, std: Math.sqrt(s2 / data.length - mean * mean) };
}

describe('initWeights', () => {
  const dit = initWeights(WAN21_MINI, 7, 'dit');

  it('produces exactly the spec tensors, float32, with the spec dims', () => {
    const shapes = parameterShapes(WAN21_MINI);
    expect([...dit.keys()]).toEqual([...shapes.keys()]);
    for (const [name, t] of dit) {
      expect(t.dtype).toBe('float32');
      expect(t.dims).toEqual(shapes.get(name));
      expect(t.data).toBeInstanceOf(Float32Array);
    }
    const te = initWeights(WAN21_MINI, 7, 'text_encoder');
    expect([...te.keys()]).toEqual([...textEncoderParameterShapes(WAN21_MINI).keys()]);
  });

  it('is deterministic and seed-sensitive', () => {
    const again = initWeights(WAN21_MINI, 7, 'dit');
    const other = initWeights(WAN21_MINI, 8, 'dit');
    for (const [name, t] of dit) {
      expect(sameBits(again.get(name)!.data, t.data), name).toBe(true);
      expect(sameBits(other.get(name)!.data, t.data), name).toBe(false);
    }
  });

  it('draws tensor i of the sorted names from Philox stream i', () => {
    const names = [...dit.keys()].sort();
    const index = names.indexOf('blocks.0.ffn.0.weight');
    const raw = gaussianNoise(7, index, 512 * 128);
    const expected = raw.map((z) => z / Math.sqrt(128));
    expect(sameBits(dit.get('blocks.0.ffn.0.weight')!.data, expected)).toBe(true);
    const te = initWeights(WAN21_MINI, 7, 'text_encoder');
    const teNames = [...te.keys()].sort();
    const tokenIndex = teNames.indexOf('text_encoder.token_embedding.weight');
    expect(
      sameBits(
        te.get('text_encoder.token_embedding.weight')!.data,
        gaussianNoise(7, TEXT_ENCODER_STREAM_BASE + tokenIndex, 257 * 64),
      ),
    ).toBe(true);
  });

  it('scales tensors as documented', () => {
    const w = stats(dit.get('blocks.1.self_attn.q.weight')!.data);
    expect(w.mean).toBeCloseTo(0, 2);
    expect(w.std).toBeCloseTo(1 / Math.sqrt(128), 2);
    const patch = stats(dit.get('patch_embedding.weight')!.data);
    expect(patch.std).toBeCloseTo(1 / 4, 1); // fan_in = C·pt·ph·pw = 16
    const mod = stats(dit.get('blocks.0.modulation')!.data);
    expect(mod.std).toBeGreaterThan(0.01);
    expect(mod.std).toBeLessThan(0.03);
    const norm = stats(dit.get('blocks.0.cross_attn.norm_q.weight')!.data);
    expect(norm.mean).toBeCloseTo(1, 1);
    expect(norm.std).toBeLessThan(0.03);
    const bias = stats(dit.get('head.head.bias')!.data);
    expect(Math.abs(bias.mean)).toBeLessThan(0.03);
  });

  it('allocates every tensor in a SharedArrayBuffer of its own (a version is held once)', () => {
    for (const component of ['dit', 'text_encoder'] as const) {
      const weights = initWeights(WAN21_MINI, 1, component);
      expect([...weights.values()].every(isSharedTensor)).toBe(true);
    }
  });
});
