// The Wan2.1 VAE decoder's decode steps on the ort-cpu backend (real onnxruntime-node sessions in
// the compute pool): a clip decoded one latent frame per forward, the causal caches fed back,
// reproduces the original Wan2.1 code's frames (test/fixtures/wan21-vae-original), captured
// sessions replay the eager ones bit for bit, and decoding is causal (a clip's first latent
// frames decode to the first frames of the longer clip).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrtComponentBuilder, ORT_PARITY_TOLERANCE, OrtSessions } from '@flowfleet/backends';
import { readSafetensors } from '@flowfleet/formats';
import { decodeWeights } from '@flowfleet/models';
import {
  createVaeDecoderComponent,
  decodeVaeClip,
  validateWanVaeConfig,
  VaeClipDecode,
  type WanVaeConfig,
} from '@flowfleet/models/wan21';
import { ComputePool, within, type TensorData, type WeightSet } from '@flowfleet/platform';
import { firstBitDifference } from '../onnx/ort-harness.js';

const FIXTURE = new URL('../fixtures/wan21-vae-original/tiny.safetensors', import.meta.url);

function slice(latent: TensorData, frames: number): TensorData {
  const [b = 0, c = 0, t = 0, h = 0, w = 0] = latent.dims;
  const out = new Float32Array(b * c * frames * h * w);
  const plane = h * w;
  for (let bc = 0; bc < b * c; bc++) {
    out.set(
      (latent.data as Float32Array).subarray(bc * t * plane, (bc * t + frames) * plane),
      bc * frames * plane,
    );
  }
  return { dtype: 'float32', dims: [b, c, frames, h, w], data: out };
}

describe('ort-cpu decode steps of the Wan2.1 VAE decoder', () => {
  const bytes = readFileSync(FIXTURE);
  const config = validateWanVaeConfig(
    JSON.parse(readSafetensors(bytes).metadata['config'] ?? '') as WanVaeConfig,
  );
  const all = decodeWeights(bytes).tensors;
  const latent = all.get('latent')!;
  const original = all.get('frames')!;
  const spec = createVaeDecoderComponent(config);
  const weights: WeightSet = {
    id: 'vae-tiny@1',
    tensors: new Map([...spec.parameterShapes().keys()].map((name) => [name, all.get(name)!])),
  };
  let pool: ComputePool;
  let sessions: OrtSessions;
  beforeAll(async () => {
    pool = await ComputePool.create({ threads: 1 });
    sessions = await OrtSessions.attach(pool);
  });
  afterAll(async () => {
    await pool.close();
  });

  it('reproduce the original Wan2.1 code frame by frame, within the ort cells’ tolerance', async () => {
    const component = await createOrtComponentBuilder({ sessions })(spec, undefined);
    try {
      const frames = await decodeVaeClip(config, latent, (inputs) =>
        component.run(inputs, weights),
      );
      expect(frames.dims).toEqual(original.dims);
      const expected = (original.data as Float32Array).map((v) => Math.min(1, Math.max(-1, v)));
      // The original's frames are unclamped: the clamp to [−1, 1] acts on some, not most.
      const clamped = (original.data as Float32Array).filter((v) => Math.abs(v) > 1).length;
      expect(clamped).toBeGreaterThan(0);
      expect(clamped).toBeLessThan(expected.length / 10);
      const verdict = within(frames.data as Float32Array, expected, ORT_PARITY_TOLERANCE);
      expect(verdict.maxAbs).toBeLessThanOrEqual(ORT_PARITY_TOLERANCE.atol);
      expect(verdict.passed).toBe(true);
    } finally {
      await component.dispose();
    }
  });

  it('a captured session replays the eager steps bit for bit, and decoding is causal', async () => {
    const component = await createOrtComponentBuilder({ sessions })(spec, undefined);
    try {
      const eager = await decodeVaeClip(config, latent, (inputs) => component.run(inputs, weights));
      const clip = new VaeClipDecode(config, latent);
      const dims = Object.fromEntries(Object.entries(clip.inputs(0)).map(([k, t]) => [k, t.dims]));
      const captured = await component.capture!(weights, dims);
      try {
        const replay = await decodeVaeClip(config, latent, (inputs) => captured.run(inputs));
        expect(firstBitDifference(eager.data as Float32Array, replay.data as Float32Array)).toBe(
          -1,
        );
      } finally {
        await captured.dispose();
      }
      // 2 of the 3 latent frames → the first 1 + 4 frames of the 3-frame clip, bit for bit.
      const short = await decodeVaeClip(config, slice(latent, 2), (inputs) =>
        component.run(inputs, weights),
      );
      const [b = 0, c = 0, n = 0, h = 0, w = 0] = short.dims;
      expect(n).toBe(5);
      const full = eager.data as Float32Array;
      const total = eager.dims[2] ?? 0;
      for (let bc = 0; bc < b * c; bc++) {
        const got = (short.data as Float32Array).subarray(bc * n * h * w, (bc + 1) * n * h * w);
        const want = full.subarray(bc * total * h * w, (bc * total + n) * h * w);
        expect(firstBitDifference(got, want)).toBe(-1);
      }
    } finally {
      await component.dispose();
    }
  });
});
