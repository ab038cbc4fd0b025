import { describe, expect, it } from 'vitest';
import { isFlowfleetError } from '@flowfleet/errors';
import { gaussianNoise } from '@flowfleet/numerics';
import type { TensorData } from '@flowfleet/platform';
import { initWeights } from '../init-weights.js';
import { WAN21_MINI } from '../wan21-config.js';
import { ditForward } from './dit-forward.js';
import type { DitWorkspaceSlot } from './dit-forward.js';
import type { LatentDims } from './patchify.js';

/** Bit-for-bit equality of two typed arrays (fast: compares bytes, not elements). */
function sameBits(a: ArrayBufferView, b: ArrayBufferView): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(
    Buffer.from(b.buffer, b.byteOffset, b.byteLength),
  );
}

const config = WAN21_MINI;
const weights = initWeights(config, 1, 'dit');
const sample = 4 * 4 * 16 * 16;
const ctxSize = 16 * 64;

function inputs(batch: number, seed = 5) {
  return {
    latent: gaussianNoise(seed, 0, batch * sample),
    dims: [batch, 4, 4, 16, 16] as LatentDims,
    timestep: Float32Array.from({ length: batch }, (_, b) => 900 - 300 * b),
    context: gaussianNoise(seed, 1, batch * ctxSize),
  };
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isFlowfleetError(error) ? error.code : String(error);
  }
  return undefined;
}

describe('ditForward (wan21-mini)', () => {
  const input2 = inputs(2);
  const v2 = ditForward(weights, config, input2);

  it('returns a finite, non-constant O(1) velocity of the latent shape', () => {
    expect(v2.length).toBe(2 * sample);
    let sumSq = 0;
    let min = Infinity;
    let max = -Infinity;
    for (const v of v2) {
      expect(Number.isFinite(v)).toBe(true);
      sumSq += v * v;
      min = Math.min(min, v);
      max = Math.max(max, v);
    }
    const rms = Math.sqrt(sumSq / v2.length);
    expect(rms).toBeGreaterThan(0.3);
    expect(rms).toBeLessThan(3);
    expect(max - min).toBeGreaterThan(1);
  });

  it('is deterministic, also when reusing a workspace', () => {
    const slot: DitWorkspaceSlot = {};
    const a = ditForward(weights, config, input2, slot);
    const ws = slot.workspace;
    const b = ditForward(weights, config, input2, slot);
    expect(slot.workspace).toBe(ws);
    expect(sameBits(a, v2)).toBe(true);
    expect(sameBits(b, v2)).toBe(true);
    expect(b).not.toBe(a); // the output is never a workspace buffer
  });

  it('is batch-consistent: row b of a B=2 forward equals the B=1 forward, bit for bit', () => {
    for (const b of [0, 1]) {
      const one = ditForward(weights, config, {
        latent: input2.latent.slice(b * sample, (b + 1) * sample),
        dims: [1, 4, 4, 16, 16],
        timestep: [input2.timestep[b]!],
        context: input2.context.slice(b * ctxSize, (b + 1) * ctxSize),
      });
      expect(sameBits(one, v2.subarray(b * sample, (b + 1) * sample))).toBe(true);
    }
  });

  it('depends on the timestep, the context and the weights', () => {
    // A small grid (2 × 4 × 4 tokens) keeps the five forwards cheap.
    const small = {
      latent: gaussianNoise(9, 0, 2 * 4 * 2 * 8 * 8),
      dims: [2, 4, 2, 8, 8] as LatentDims,
      timestep: [500, 500],
      context: gaussianNoise(9, 1, 2 * ctxSize),
    };
    const half = 4 * 2 * 8 * 8;
    const base = ditForward(weights, config, small);
    const t = ditForward(weights, config, { ...small, timestep: [501, 500] });
    expect(sameBits(t.subarray(0, half), base.subarray(0, half))).toBe(false);
    expect(sameBits(t.subarray(half), base.subarray(half))).toBe(true);
    const ctx = ditForward(weights, config, {
      ...small,
      context: gaussianNoise(6, 1, 2 * ctxSize),
    });
    expect(sameBits(ctx, base)).toBe(false);
    const otherLatent = ditForward(weights, config, {
      ...small,
      latent: gaussianNoise(8, 0, 2 * half),
    });
    expect(sameBits(otherLatent, base)).toBe(false);
    expect(sameBits(ditForward(initWeights(config, 2, 'dit'), config, small), base)).toBe(false);
  });

  it('accepts other grids and context lengths', () => {
    const v = ditForward(weights, config, {
      latent: gaussianNoise(1, 0, 4 * 2 * 6 * 10),
      dims: [1, 4, 2, 6, 10],
      timestep: [10],
      context: gaussianNoise(1, 1, 3 * 64),
    });
    expect(v.length).toBe(4 * 2 * 6 * 10);
    expect(v.every(Number.isFinite)).toBe(true);
  });

  it('rejects bad inputs with MODEL_INPUT_INVALID', () => {
    const bad = (patch: Partial<ReturnType<typeof inputs>>) => () =>
      ditForward(weights, config, { ...inputs(1), ...patch });
    expect(codeOf(bad({ dims: [1, 3, 4, 16, 16] }))).toBe('MODEL_INPUT_INVALID');
    expect(codeOf(bad({ dims: [1, 4, 4, 15, 16] }))).toBe('MODEL_INPUT_INVALID');
    expect(codeOf(bad({ dims: [2, 4, 4, 16, 16] }))).toBe('MODEL_INPUT_INVALID');
    expect(codeOf(bad({ timestep: new Float32Array(2) }))).toBe('MODEL_INPUT_INVALID');
    expect(codeOf(bad({ context: new Float32Array(100) }))).toBe('MODEL_INPUT_INVALID');
    expect(codeOf(bad({ context: new Float32Array(0) }))).toBe('MODEL_INPUT_INVALID');
  });

  it('rejects a weight set that does not match the config, listing the problems', () => {
    const broken = new Map<string, TensorData>(weights);
    broken.delete('blocks.1.ffn.0.bias');
    broken.set('extra', { dtype: 'float32', dims: [1], data: new Float32Array(1) });
    broken.set('head.modulation', {
      dtype: 'float32',
      dims: [2, 128],
      data: new Float32Array(256),
    });
    try {
      ditForward(broken, config, inputs(1));
      expect.unreachable();
    } catch (error) {
      expect(isFlowfleetError(error, 'MODEL_WEIGHTS_MISMATCH')).toBe(true);
      const details = (error as { details: Record<string, unknown> }).details;
      expect(details['missing']).toEqual(['blocks.1.ffn.0.bias']);
      expect(details['unexpected']).toEqual(['extra']);
      expect(details['wrongShape']).toEqual([
        { name: 'head.modulation', expected: [1, 2, 128], actual: [2, 128], dtype: 'float32' },
      ]);
    }
  });
});
