// (b) DESIGN.md §3/§8: the captured form (weights and rope tables baked, dims fixed) gives
// bit-identical outputs to the eager form for the same weights and inputs, with pre-packing off
// at optimisation level `basic`.
import { describe, expect, it } from 'vitest';
import {
  WAN21_MINI,
  buildDitOnnx,
  buildTextEncoderOnnx,
  createOnnxArtifacts,
  initWeights,
  tokenize,
} from '@flowfleet/models/wan21';
import type { TensorData } from '@flowfleet/platform';
import {
  createSession,
  feedsOf,
  firstBitDifference,
  gaussianTensor,
  runFloat,
} from './ort-harness.js';

const config = WAN21_MINI;

describe('captured vs eager ONNX graphs', () => {
  it.each([1, 2])('dit: bit-identical velocity at %i intra-op thread(s)', async (threads) => {
    const weights = initWeights(config, 21, 'dit');
    const dims = { batch: 2, frames: 2, height: 16, width: 12 };
    const inputs: Record<string, TensorData> = {
      latent: gaussianTensor(4, 0, [2, config.inChannels, 2, 16, 12]),
      timestep: { dtype: 'float32', dims: [2], data: Float32Array.from([875, 3.5]) },
      context: gaussianTensor(4, 1, [2, config.textLen, config.textDim]),
    };
    const extra = createOnnxArtifacts(config, 'dit').eagerInputs({ latent: [2, 4, 2, 16, 12] });
    const eager = await createSession(buildDitOnnx(config, { form: 'eager' }), threads);
    const captured = await createSession(
      buildDitOnnx(config, { form: 'captured', weights, ...dims }),
      threads,
    );
    const a = await runFloat(eager, feedsOf({ ...inputs, ...extra }, weights), 'velocity');
    const b = await runFloat(captured, feedsOf(inputs), 'velocity');
    expect(b.dims).toEqual(a.dims);
    expect(firstBitDifference(a.data, b.data)).toBe(-1);
    // And both repeat bit-for-bit run to run.
    const again = await runFloat(captured, feedsOf(inputs), 'velocity');
    expect(firstBitDifference(again.data, b.data)).toBe(-1);
  });

  it('text encoder: bit-identical context', async () => {
    const weights = initWeights(config, 21, 'text_encoder');
    const ids = tokenize(['hello', 'bit-identical please'], config);
    const tokens: TensorData = {
      dtype: 'int64',
      dims: [2, config.textLen],
      data: BigInt64Array.from(ids, (v) => BigInt(v)),
    };
    const eager = await createSession(buildTextEncoderOnnx(config, { form: 'eager' }));
    const captured = await createSession(
      buildTextEncoderOnnx(config, { form: 'captured', weights, batch: 2 }),
    );
    const a = await runFloat(eager, feedsOf({ tokens }, weights), 'context');
    const b = await runFloat(captured, feedsOf({ tokens }), 'context');
    expect(firstBitDifference(a.data, b.data)).toBe(-1);
  });

  it('rejects inputs whose dims differ from the fixed dims of a captured graph', async () => {
    const weights = initWeights(config, 21, 'text_encoder');
    const captured = await createSession(
      buildTextEncoderOnnx(config, { form: 'captured', weights, batch: 2 }),
    );
    const tokens: TensorData = {
      dtype: 'int64',
      dims: [3, config.textLen],
      data: new BigInt64Array(3 * config.textLen),
    };
    await expect(captured.run(feedsOf({ tokens }))).rejects.toThrow(/dimension|shape/i);
  });
});
