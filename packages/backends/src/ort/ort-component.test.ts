import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFlowfleetError } from '@flowfleet/errors';
import {
  ComputePool,
  type ComponentSpec,
  type TensorData,
  type WeightSet,
} from '@flowfleet/platform';
import { createOrtComponentBuilder } from './ort-component.js';
import { OrtSessions } from './ort-sessions.js';
import {
  seededFloats,
  MLP_DIMS,
  MLP_ONNX_ARTIFACTS,
  mlpOnnx,
  mlpWeights,
} from '../../test-support/ort-test-models.js';

const spec: ComponentSpec = {
  id: 'mlp/dit',
  kind: 'dit',
  factory: () => {
    throw new Error('the TS reference is not under test here');
  },
  onnx: MLP_ONNX_ARTIFACTS,
};

const input = (seed: number, batch = 3): TensorData => ({
  dtype: 'float32',
  dims: [batch, MLP_DIMS.in],
  data: seededFloats(seed, batch * MLP_DIMS.in),
});

describe('ort-cpu component', () => {
  let compute: ComputePool;
  let pool: OrtSessions;
  const weights: WeightSet = { id: 'mlp/dit@1', tensors: mlpWeights(1) };

  beforeAll(async () => {
    compute = await ComputePool.create({ threads: 1 });
    pool = await OrtSessions.attach(compute);
  });
  afterAll(async () => {
    await compute.close();
  });

  const build = () => createOrtComponentBuilder({ sessions: pool });

  it('runs eager with weights as inputs, uploading each weight set once', async () => {
    const [before] = await pool.stats();
    const component = await build()(spec, undefined);
    expect(component.source).toBe('ort-cpu');
    expect(component.kind).toBe('dit');
    const a = await component.run({ x: input(5) }, weights);
    const b = await component.run({ x: input(5) }, weights);
    expect(a['y']?.dims).toEqual([3, MLP_DIMS.out]);
    expect(b['y']?.data).toEqual(a['y']?.data);
    const other: WeightSet = { id: 'mlp/dit@2', tensors: mlpWeights(2) };
    const c = await component.run({ x: input(5) }, other);
    expect(c['y']?.data).not.toEqual(a['y']?.data);
    const [mid] = await pool.stats();
    expect(mid!.weightUploads - before!.weightUploads).toBe(2);
    expect(mid!.sessionsCreated - before!.sessionsCreated).toBe(1);
    await component.releaseWeights?.(other.id);
    await component.dispose();
    await component.dispose();
    const [after] = await pool.stats();
    expect(after!.weightSetsLive).toBe(before!.weightSetsLive);
    expect(after!.sessionsLive).toBe(before!.sessionsLive);
  });

  it('shares one eager session per spec id between components', async () => {
    const builder = build();
    const [before] = await pool.stats();
    const one = await builder(spec, undefined);
    const two = await builder(spec, undefined);
    const [after] = await pool.stats();
    expect(after!.sessionsCreated - before!.sessionsCreated).toBe(1);
    await one.dispose();
    // Still usable by the other holder.
    expect((await two.run({ x: input(1) }, weights))['y']?.dims).toEqual([3, MLP_DIMS.out]);
    await two.dispose();
  });

  it('captured (weights as initializers, fixed dims) is bit-identical to eager', async () => {
    const component = await build()(spec, undefined);
    const [before] = await pool.stats();
    const captured = await component.capture!(weights, { x: [3, MLP_DIMS.in] });
    const model = mlpOnnx({
      form: 'captured',
      weights: weights.tensors,
      inputDims: { x: [3, MLP_DIMS.in] },
    });
    expect(captured.bytesHeld).toBe(model.byteLength);
    for (const seed of [11, 12, 13]) {
      const eager = await component.run({ x: input(seed) }, weights);
      const replay = await captured.run({ x: input(seed) });
      const e = eager['y']?.data as Float32Array;
      const r = replay['y']?.data as Float32Array;
      expect(r.length).toBe(3 * MLP_DIMS.out);
      expect(Buffer.from(r.buffer).equals(Buffer.from(e.buffer))).toBe(true);
    }
    const [live] = await pool.stats();
    expect(live!.sessionsLive).toBe(before!.sessionsLive + 1);
    await captured.dispose();
    await captured.dispose();
    const [after] = await pool.stats();
    expect(after!.sessionsLive).toBe(before!.sessionsLive);
    await expect(captured.run({ x: input(1) })).rejects.toMatchObject({
      code: 'BACK_ORT_UNKNOWN_SESSION',
    });
    await component.dispose();
  });

  it('refuses specs without an ONNX builder and providers that are not here', async () => {
    const bare: ComponentSpec = { id: spec.id, kind: spec.kind, factory: spec.factory };
    await expect(build()(bare, undefined)).rejects.toMatchObject({
      code: 'BACK_ORT_NO_ONNX_ARTIFACT',
    });
    const cuda = createOrtComponentBuilder({ provider: 'cuda', sessions: pool });
    const error: unknown = await cuda(spec, undefined).catch((e: unknown) => e);
    expect(isFlowfleetError(error, 'BACK_PROVIDER_UNAVAILABLE')).toBe(true);
    expect((error as Error).message).toMatch(/Failed to load shared library/);
  });
});
