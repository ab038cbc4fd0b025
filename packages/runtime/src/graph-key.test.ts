import { canonicalJson } from '@flowfleet/formats';
import { describe, expect, it } from 'vitest';
import { graphKeyString, type GraphKeyParts } from './graph-key.js';

const parts: GraphKeyParts = {
  device: 'cpu',
  arch: 'x86-64-v3',
  loopId: 'wan21-sde',
  shapeSig: { kind: 'denoise', dims: { latent: [1, 16, 1, 8, 8] }, dtype: 'float32' },
  weights: { dit: 3, text_encoder: 1 },
  // U+FFFF sorts before U+1F600 by code point, after it by UTF-16 code unit (a surrogate).
  graphKey: { '\u{1F600}': 'emoji', '\uFFFF': 'bmp', cfg: true, '10': 1, '2': 2 },
};

describe('graphKeyString', () => {
  it('is the canonical JSON of its parts (one owner: formats), whatever their key order', () => {
    expect(graphKeyString(parts)).toBe(canonicalJson(parts));
    const reordered: GraphKeyParts = {
      ...parts,
      graphKey: Object.fromEntries(Object.entries(parts.graphKey).reverse()),
      weights: { text_encoder: 1, dit: 3 },
    };
    expect(graphKeyString(reordered)).toBe(graphKeyString(parts));
  });

  it('tells different weight versions apart', () => {
    expect(graphKeyString({ ...parts, weights: { dit: 4, text_encoder: 1 } })).not.toBe(
      graphKeyString(parts),
    );
  });
});
