import { describe, expect, it } from 'vitest';
import {
  parameterCount,
  parameterShapes,
  shapeSize,
  textEncoderParameterShapes,
} from './parameter-shapes.js';
import { WAN21_1_3B, WAN21_MINI } from './wan21-config.js';
import type { Wan21Config } from './wan21-config.js';

// The spec's name list, written out independently of parameter-shapes.ts.
function specNames(layers: number): string[] {
  const names = [
    'patch_embedding.weight',
    'patch_embedding.bias',
    ...['text_embedding', 'time_embedding'].flatMap((m) =>
      ['0', '2'].flatMap((i) => [`${m}.${i}.weight`, `${m}.${i}.bias`]),
    ),
    'time_projection.1.weight',
    'time_projection.1.bias',
    'head.head.weight',
    'head.head.bias',
    'head.modulation',
  ];
  for (let i = 0; i < layers; i++) {
    for (const attn of ['self_attn', 'cross_attn']) {
      for (const p of ['q', 'k', 'v', 'o'])
        names.push(`blocks.${i}.${attn}.${p}.weight`, `blocks.${i}.${attn}.${p}.bias`);
      names.push(`blocks.${i}.${attn}.norm_q.weight`, `blocks.${i}.${attn}.norm_k.weight`);
    }
    names.push(`blocks.${i}.norm3.weight`, `blocks.${i}.norm3.bias`, `blocks.${i}.modulation`);
    for (const f of ['0', '2'])
      names.push(`blocks.${i}.ffn.${f}.weight`, `blocks.${i}.ffn.${f}.bias`);
  }
  return names.sort();
}

/** Wan2.1 DiT parameter count derived by hand from the architecture. */
function handCount(c: Wan21Config): number {
  const { dim: D, ffnDim: Fh, freqDim, textDim, layers, inChannels: C } = c;
  const P = C * 4; // patch (1, 2, 2)
  const lin = (i: number, o: number) => i * o + o;
  const patch = D * C * 4 + D;
  const text = lin(textDim, D) + lin(D, D);
  const time = lin(freqDim, D) + lin(D, D) + lin(D, 6 * D);
  const attn = 4 * lin(D, D) + 2 * D;
  const block = 2 * attn + 2 * D + lin(D, Fh) + lin(Fh, D) + 6 * D;
  const head = lin(D, P) + 2 * D;
  return patch + text + time + layers * block + head;
}

describe('parameterShapes', () => {
  it('names exactly the spec list', () => {
    expect([...parameterShapes(WAN21_MINI).keys()].sort()).toEqual(specNames(2));
    expect([...parameterShapes(WAN21_1_3B).keys()].sort()).toEqual(specNames(30));
  });

  it('gives PyTorch layouts for the mini config', () => {
    const s = parameterShapes(WAN21_MINI);
    expect(s.get('patch_embedding.weight')).toEqual([128, 4, 1, 2, 2]);
    expect(s.get('text_embedding.0.weight')).toEqual([128, 64]);
    expect(s.get('time_embedding.0.weight')).toEqual([128, 64]);
    expect(s.get('time_projection.1.weight')).toEqual([768, 128]);
    expect(s.get('time_projection.1.bias')).toEqual([768]);
    expect(s.get('blocks.1.ffn.0.weight')).toEqual([512, 128]);
    expect(s.get('blocks.1.ffn.2.weight')).toEqual([128, 512]);
    expect(s.get('blocks.0.modulation')).toEqual([1, 6, 128]);
    expect(s.get('blocks.0.cross_attn.norm_k.weight')).toEqual([128]);
    expect(s.get('head.head.weight')).toEqual([16, 128]);
    expect(s.get('head.modulation')).toEqual([1, 2, 128]);
  });

  it('lists the text encoder tensors under text_encoder.', () => {
    const s = textEncoderParameterShapes(WAN21_MINI);
    expect(Object.fromEntries(s)).toEqual({
      'text_encoder.token_embedding.weight': [257, 64],
      'text_encoder.pos_embedding': [16, 64],
      'text_encoder.mlp.0.weight': [128, 64],
      'text_encoder.mlp.0.bias': [128],
      'text_encoder.mlp.2.weight': [64, 128],
      'text_encoder.mlp.2.bias': [64],
    });
    expect(parameterCount(WAN21_MINI, 'text_encoder')).toBe(
      257 * 64 + 16 * 64 + 128 * 65 + 64 * 129,
    );
  });
});

describe('parameterCount', () => {
  it('matches the hand-derived formula for both configs', () => {
    expect(parameterCount(WAN21_MINI)).toBe(handCount(WAN21_MINI));
    expect(parameterCount(WAN21_1_3B)).toBe(handCount(WAN21_1_3B));
  });

  it('puts Wan2.1-1.3B at 1,418,996,800 parameters, within 10 % of the published 1.3B', () => {
    const count = parameterCount(WAN21_1_3B);
    expect(count).toBe(1_418_996_800);
    expect(Math.abs(count - 1.3e9) / 1.3e9).toBeLessThan(0.1);
    // fp32 checkpoint size: ~5.68 GB, as the published 1.3B fp32 weights.
    expect((count * 4) / 1e9).toBeCloseTo(5.68, 2);
  });

  it('sums the element counts of the shapes', () => {
    let total = 0;
    for (const dims of parameterShapes(WAN21_MINI).values()) total += shapeSize(dims);
    expect(parameterCount(WAN21_MINI)).toBe(total);
    expect(shapeSize([])).toBe(1);
    expect(shapeSize([3, 0, 2])).toBe(0);
  });
});
