import { describe, expect, it } from 'vitest';
import { isFlowfleetError } from '@flowfleet/errors';
import type { TensorData } from '@flowfleet/platform';
import { WAN21_VAE_MINI } from './vae-config.js';
import { VaeClipDecode, vaeStepInputDims } from './vae-clip-decode.js';

const latentOf = (dims: number[]): TensorData => {
  const n = dims.reduce((a, b) => a * b, 1);
  return { dtype: 'float32', dims, data: Float32Array.from({ length: n }, (_, i) => i) };
};

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return isFlowfleetError(error) ? error.code : 'not-flowfleet';
  }
  return undefined;
}

describe('VaeClipDecode', () => {
  it('step i feeds latent frame i of every sample, frame_index i, and zero caches before frame 0', () => {
    const clip = new VaeClipDecode(WAN21_VAE_MINI, latentOf([2, 4, 3, 2, 2]));
    expect(clip.steps).toBe(3);
    expect(clip.frameDims()).toEqual([2, 3, 9, 16, 16]);
    const inputs = clip.inputs(0);
    expect(Object.fromEntries(Object.entries(inputs).map(([k, t]) => [k, t.dims]))).toEqual(
      vaeStepInputDims(WAN21_VAE_MINI, 2, 2, 2),
    );
    // [B, z, T, h, w] with values = flat index: sample 1, channel 0, frame 0 starts at 1·4·3·4.
    const frame = inputs['latent']!.data as Float32Array;
    expect([...frame.subarray(0, 4)]).toEqual([0, 1, 2, 3]);
    expect([...frame.subarray(16, 20)]).toEqual([48, 49, 50, 51]);
    expect(inputs['frame_index']!.data).toEqual(BigInt64Array.of(0n));
    expect((inputs['cache.decoder.head.2']!.data as Float32Array).every((v) => v === 0)).toBe(true);
  });

  it('refuses a latent of other dims and step outputs of the wrong dims; steps run in order', () => {
    expect(codeOf(() => new VaeClipDecode(WAN21_VAE_MINI, latentOf([2, 5, 3, 2, 2])))).toBe(
      'MODEL_INPUT_INVALID',
    );
    expect(codeOf(() => new VaeClipDecode(WAN21_VAE_MINI, latentOf([2, 4, 2, 2])))).toBe(
      'MODEL_INPUT_INVALID',
    );
    const clip = new VaeClipDecode(WAN21_VAE_MINI, latentOf([1, 4, 2, 2, 2]));
    const frames = latentOf([1, 3, 4, 16, 16]); // 4 frames: a later step's, not frame 0's
    expect(codeOf(() => clip.accept(0, { frames }))).toBe('MODEL_INPUT_INVALID');
    expect(codeOf(() => clip.inputs(1))).toBe('not-flowfleet');
    expect(() => clip.frames()).toThrow(/before step 0 of 2/);
  });
});
