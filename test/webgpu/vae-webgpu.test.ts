// A component no DiT test covers on the GPU provider: the Wan2.1 VAE decoder's decode steps on
// ort-webgpu (whatever adapter detection finds; lavapipe in CI) reproduce the original Wan2.1
// code's frames within the webgpu cells' stated tolerance, and its captured sessions replay the
// eager ones bit for bit — the webgpu backend builds any card's ONNX component, not just the DiT.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createOrtComponentBuilder,
  ORT_WEBGPU_PARITY_TOLERANCE,
  OrtSessions,
} from '@flowfleet/backends';
import { readSafetensors } from '@flowfleet/formats';
import { decodeWeights } from '@flowfleet/models';
import {
  createVaeDecoderComponent,
  decodeVaeClip,
  validateWanVaeConfig,
  VaeClipDecode,
  type WanVaeConfig,
} from '@flowfleet/models/wan21';
import { bitIdentical, ComputePool, within, type WeightSet } from '@flowfleet/platform';

const FIXTURE = new URL('../fixtures/wan21-vae-original/tiny.safetensors', import.meta.url);

describe('ort-webgpu decode steps of the Wan2.1 VAE decoder', () => {
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

  it('matches the original within the webgpu tolerance; captured replays eager bit for bit', async () => {
    const component = await createOrtComponentBuilder({ provider: 'webgpu', sessions })(
      spec,
      undefined,
    );
    try {
      expect(component.source).toBe('ort-webgpu');
      const eager = await decodeVaeClip(config, latent, (inputs) => component.run(inputs, weights));
      expect(eager.dims).toEqual(original.dims);
      const expected = (original.data as Float32Array).map((v) => Math.min(1, Math.max(-1, v)));
      const verdict = within(eager.data as Float32Array, expected, ORT_WEBGPU_PARITY_TOLERANCE);
      console.info(`vae on webgpu vs the original: maxAbs ${verdict.maxAbs.toExponential(2)}`);
      expect(verdict.passed).toBe(true);
      const clip = new VaeClipDecode(config, latent);
      const dims = Object.fromEntries(Object.entries(clip.inputs(0)).map(([k, t]) => [k, t.dims]));
      const captured = await component.capture!(weights, dims);
      try {
        const replay = await decodeVaeClip(config, latent, (inputs) => captured.run(inputs));
        expect(bitIdentical(eager.data as Float32Array, replay.data as Float32Array)).toBe(true);
      } finally {
        await captured.dispose();
      }
    } finally {
      await component.dispose();
    }
  }, 120_000);
});
