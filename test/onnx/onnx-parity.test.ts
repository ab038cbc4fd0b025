// (a) the eager ONNX graphs against the TS reference forward, and (d) one eager session serving
// several batch sizes and grids (symbolic dims).
import { beforeAll, describe, expect, it } from 'vitest';
import {
  WAN21_MINI,
  buildDitOnnx,
  buildTextEncoderOnnx,
  createOnnxArtifacts,
  ditForward,
  initWeights,
  textEncoderForward,
  tokenize,
} from '@flowfleet/models/wan21';
import type { TensorData } from '@flowfleet/platform';
import {
  createSession,
  errorFigures,
  feedsOf,
  gaussianTensor,
  runFloat,
  type ErrorFigures,
  type ort,
} from './ort-harness.js';

const config = WAN21_MINI;
const artifacts = createOnnxArtifacts(config, 'dit');
// Stated tolerance of the ONNX graphs vs the float64-accumulating TS reference (float32 maths in
// ORT): velocity values are O(1), so an absolute bound is the meaningful one; the elementwise
// relative error is unbounded near zero crossings, hence the norm-relative bound as well.
const TOLERANCE = { maxAbs: 2e-5, normRel: 2e-6 } as const;

function report(label: string, f: ErrorFigures): void {
  const fmt = (x: number): string => x.toExponential(2);
  console.info(
    `${label}: maxAbs ${fmt(f.maxAbs)} maxRel ${fmt(f.maxRel)} maxRel(|ref|≥1%) ` +
      `${fmt(f.maxRelSignificant)} normRel ${fmt(f.normRel)} (max|ref| ${f.maxAbsRef.toFixed(2)})`,
  );
}

interface DitCase {
  readonly latent: TensorData;
  readonly timestep: TensorData;
  readonly context: TensorData;
}

function ditCase(
  batch: number,
  frames: number,
  height: number,
  width: number,
  seed: number,
): DitCase {
  const timesteps = [937.5, 250.25, 999, 12.125].slice(0, batch);
  return {
    latent: gaussianTensor(seed, 0, [batch, config.inChannels, frames, height, width]),
    timestep: { dtype: 'float32', dims: [batch], data: Float32Array.from(timesteps) },
    context: gaussianTensor(seed, 1, [batch, config.textLen, config.textDim]),
  };
}

function reference(weights: ReadonlyMap<string, TensorData>, c: DitCase): Float32Array {
  const [B = 0, C = 0, F = 0, H = 0, W = 0] = c.latent.dims;
  return ditForward(weights, config, {
    latent: c.latent.data as Float32Array,
    dims: [B, C, F, H, W],
    timestep: c.timestep.data as Float32Array,
    context: c.context.data as Float32Array,
  });
}

function ditFeeds(
  c: DitCase,
  weights: ReadonlyMap<string, TensorData>,
): Record<string, ort.Tensor> {
  const extra = artifacts.eagerInputs({ latent: c.latent.dims });
  return feedsOf({ latent: c.latent, timestep: c.timestep, context: c.context, ...extra }, weights);
}

describe('eager dit graph vs the TS reference (wan21-mini)', () => {
  const weights = initWeights(config, 11, 'dit');
  const base = ditCase(2, 4, 16, 16, 5);
  let session: ort.InferenceSession;
  let baseRef: Float32Array;

  beforeAll(async () => {
    session = await createSession(buildDitOnnx(config, { form: 'eager' }));
    baseRef = reference(weights, base);
  });

  it('matches at B=2 on the default 4×16×16 latent', async () => {
    const out = await runFloat(session, ditFeeds(base, weights), 'velocity');
    expect(out.dims).toEqual([2, 4, 4, 16, 16]);
    const f = errorFigures(out.data, baseRef);
    report('dit B=2 4x16x16', f);
    expect(f.maxAbsRef).toBeGreaterThan(0.5); // not degenerate
    expect(f.maxAbs).toBeLessThanOrEqual(TOLERANCE.maxAbs);
    expect(f.normRel).toBeLessThanOrEqual(TOLERANCE.normRel);
  });

  it('serves B=1 and a second grid (2×8×12) from the same session', async () => {
    // The reference computes each sample independently, so sample 0 of the B=2 run is the B=1 answer.
    const single: DitCase = {
      latent: { ...base.latent, dims: [1, 4, 4, 16, 16], data: base.latent.data.subarray(0, 4096) },
      timestep: { ...base.timestep, dims: [1], data: base.timestep.data.subarray(0, 1) },
      context: { ...base.context, dims: [1, 16, 64], data: base.context.data.subarray(0, 1024) },
    };
    const one = await runFloat(session, ditFeeds(single, weights), 'velocity');
    expect(one.dims).toEqual([1, 4, 4, 16, 16]);
    const f1 = errorFigures(one.data, baseRef.subarray(0, 4096));
    report('dit B=1 4x16x16', f1);
    expect(f1.maxAbs).toBeLessThanOrEqual(TOLERANCE.maxAbs);

    const other = ditCase(2, 2, 8, 12, 9);
    const out = await runFloat(session, ditFeeds(other, weights), 'velocity');
    expect(out.dims).toEqual([2, 4, 2, 8, 12]);
    const f2 = errorFigures(out.data, reference(weights, other));
    report('dit B=2 2x8x12', f2);
    expect(f2.maxAbs).toBeLessThanOrEqual(TOLERANCE.maxAbs);
    expect(f2.normRel).toBeLessThanOrEqual(TOLERANCE.normRel);
  });
});

describe('eager text encoder graph vs the TS reference (wan21-mini)', () => {
  it('matches for a batch of prompts, including padding and multi-byte UTF-8', async () => {
    const weights = initWeights(config, 11, 'text_encoder');
    const prompts = ['a cat', 'a long prompt that is truncated to L', 'crème brûlée ☕'];
    const ids = tokenize(prompts, config);
    const tokens: TensorData = {
      dtype: 'int64',
      dims: [prompts.length, config.textLen],
      data: BigInt64Array.from(ids, (v) => BigInt(v)),
    };
    const session = await createSession(buildTextEncoderOnnx(config, { form: 'eager' }));
    const out = await runFloat(session, feedsOf({ tokens }, weights), 'context');
    expect(out.dims).toEqual([3, 16, 64]);
    const f = errorFigures(out.data, textEncoderForward(weights, ids, config));
    report('text_encoder B=3', f);
    expect(f.maxAbs).toBeLessThanOrEqual(TOLERANCE.maxAbs);
    expect(f.normRel).toBeLessThanOrEqual(TOLERANCE.normRel);
  });
});
