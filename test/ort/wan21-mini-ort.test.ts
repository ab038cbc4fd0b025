// The ort-cpu backend on the real wan21-mini graphs (from @flowfleet/models): eager (weights fed
// as inputs) and captured (weights baked in) forwards through the compute pool are bit-identical,
// and the pool computes exactly what an in-process session with the same options computes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createOrtComponentBuilder,
  loadOrt,
  ortSessionOptions,
  OrtSessions,
} from '@flowfleet/backends';
import { WAN21_MINI, initWeights, tokenize, wan21MiniCard } from '@flowfleet/models/wan21';
import {
  ComputePool,
  unsharedTensor,
  type TensorData,
  type TensorMap,
  type WeightSet,
} from '@flowfleet/platform';
import { firstBitDifference, gaussianTensor } from '../onnx/ort-harness.js';

const config = WAN21_MINI;
const specOf = (kind: 'dit' | 'text_encoder') => {
  const spec = wan21MiniCard.components.find((c) => c.kind === kind);
  if (spec === undefined) throw new Error(`wan21-mini has no ${kind}`);
  return spec;
};
const dimsOf = (inputs: TensorMap) =>
  Object.fromEntries(Object.entries(inputs).map(([name, t]) => [name, t.dims]));
const floats = (out: Record<string, TensorData>, name: string) => {
  const data = out[name]?.data;
  if (!(data instanceof Float32Array)) throw new Error(`no float32 output ${name}`);
  return data;
};

describe('ort-cpu on wan21-mini', () => {
  let pool: ComputePool;
  let sessions: OrtSessions;
  beforeAll(async () => {
    pool = await ComputePool.create({ threads: 1 });
    sessions = await OrtSessions.attach(pool);
  });
  afterAll(async () => {
    await pool.close();
  });
  const build = () => createOrtComponentBuilder({ sessions });

  it('dit: captured replays are bit-identical to eager, and eager matches in-process ORT', async () => {
    const weights: WeightSet = { id: 'wan21-mini/dit@21', tensors: initWeights(config, 21, 'dit') };
    const { frames, height, width } = wan21MiniCard.latent;
    const inputs: TensorMap = {
      latent: gaussianTensor(4, 0, [2, config.inChannels, frames, height, width]),
      timestep: { dtype: 'float32', dims: [2], data: Float32Array.from([875, 3.5]) },
      context: gaussianTensor(4, 1, [2, config.textLen, config.textDim]),
    };
    const component = await build()(specOf('dit'), undefined);
    try {
      const eager = floats(await component.run(inputs, weights), 'velocity');
      const captured = await component.capture!(weights, dimsOf(inputs));
      expect(captured.bytesHeld).toBeGreaterThan(4 * [...weights.tensors.values()].length);
      const replay = floats(await captured.run(inputs), 'velocity');
      expect(replay.length).toBe(2 * config.inChannels * frames * height * width);
      expect(firstBitDifference(eager, replay)).toBe(-1);
      await captured.dispose();

      // The same eager graph in-process with the same options.
      const ort = await loadOrt();
      const artifacts = specOf('dit').onnx!;
      const session = await ort.InferenceSession.create(
        artifacts.buildOnnx({ form: 'eager' }),
        ortSessionOptions({ provider: 'cpu', intraOpThreads: 1 }),
      );
      const feeds: Record<string, InstanceType<typeof ort.Tensor>> = {};
      const all = { ...artifacts.eagerInputs(dimsOf(inputs)), ...inputs };
      for (const [name, t] of [...Object.entries(all), ...weights.tensors]) {
        const own = unsharedTensor(t);
        feeds[name] = new ort.Tensor(own.dtype, own.data, own.dims);
      }
      const local = (await session.run(feeds))['velocity']?.data as Float32Array;
      await session.release();
      expect(firstBitDifference(eager, local)).toBe(-1);
    } finally {
      await component.dispose();
    }
  });

  it('text encoder: int64 tokens, captured bit-identical to eager', async () => {
    const weights: WeightSet = {
      id: 'wan21-mini/text_encoder@21',
      tensors: initWeights(config, 21, 'text_encoder'),
    };
    const ids = tokenize(['a red fox', 'bit-identical please'], config);
    const inputs: TensorMap = {
      tokens: {
        dtype: 'int64',
        dims: [2, config.textLen],
        data: BigInt64Array.from(ids, (v) => BigInt(v)),
      },
    };
    const component = await build()(specOf('text_encoder'), undefined);
    try {
      const eager = floats(await component.run(inputs, weights), 'context');
      const captured = await component.capture!(weights, dimsOf(inputs));
      const replay = floats(await captured.run(inputs), 'context');
      expect(replay.length).toBe(2 * config.textLen * config.textDim);
      expect(firstBitDifference(eager, replay)).toBe(-1);
    } finally {
      await component.dispose();
    }
  });
});
