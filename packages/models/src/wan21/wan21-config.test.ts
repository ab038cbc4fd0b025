import { describe, expect, it } from 'vitest';
import { isFlowfleetError } from '@flowfleet/errors';
import {
  WAN21_1_3B,
  WAN21_MINI,
  createWan21Config,
  headDim,
  patchValues,
  validateWan21Config,
} from './wan21-config.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isFlowfleetError(error) ? error.code : 'not-a-flowfleet-error';
  }
  return undefined;
}

describe('wan21 configs', () => {
  it('holds the spec table values', () => {
    expect(WAN21_MINI).toMatchObject({
      inChannels: 4,
      patch: [1, 2, 2],
      dim: 128,
      ffnDim: 512,
      freqDim: 64,
      heads: 4,
      layers: 2,
      textDim: 64,
      textLen: 16,
      textVocab: 257,
      textHidden: 128,
      eps: 1e-6,
    });
    expect(WAN21_1_3B).toMatchObject({
      inChannels: 16,
      outChannels: 16,
      dim: 1536,
      ffnDim: 8960,
      freqDim: 256,
      heads: 12,
      layers: 30,
      textDim: 4096,
      textLen: 512,
    });
    expect(headDim(WAN21_MINI)).toBe(32);
    expect(headDim(WAN21_1_3B)).toBe(128);
    expect(patchValues(WAN21_MINI)).toBe(16);
    expect(patchValues(WAN21_1_3B)).toBe(64);
    expect(validateWan21Config(WAN21_1_3B)).toBe(WAN21_1_3B);
  });

  it('fills defaults from wan21-mini and keeps outChannels = inChannels', () => {
    const c = createWan21Config({ layers: 1, inChannels: 8 });
    expect(c.layers).toBe(1);
    expect(c.outChannels).toBe(8);
    expect(c.dim).toBe(128);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('rejects structurally invalid configs with MODEL_CONFIG_INVALID', () => {
    expect(codeOf(() => createWan21Config({ dim: 130 }))).toBe('MODEL_CONFIG_INVALID');
    expect(codeOf(() => createWan21Config({ dim: 4, heads: 4 }))).toBe('MODEL_CONFIG_INVALID');
    expect(codeOf(() => createWan21Config({ layers: 0 }))).toBe('MODEL_CONFIG_INVALID');
    expect(codeOf(() => createWan21Config({ freqDim: 63 }))).toBe('MODEL_CONFIG_INVALID');
    expect(codeOf(() => createWan21Config({ textVocab: 256 }))).toBe('MODEL_CONFIG_INVALID');
    expect(codeOf(() => createWan21Config({ patch: [1, 0, 2] }))).toBe('MODEL_CONFIG_INVALID');
    expect(codeOf(() => createWan21Config({ outChannels: 5 }))).toBe('MODEL_CONFIG_INVALID');
    expect(codeOf(() => createWan21Config({ eps: 0 }))).toBe('MODEL_CONFIG_INVALID');
    expect(codeOf(() => createWan21Config({ layers: 1 }))).toBeUndefined();
  });
});
