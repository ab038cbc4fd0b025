import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFlowfleetError } from '@flowfleet/errors';
import { ComputePool, sharedTensors, type TensorData } from '@flowfleet/platform';
import { OrtSessions } from './ort-sessions.js';
import { PROBE_MODEL_BYTES } from './probe-model.js';
import {
  addModel,
  matmulChainModel,
  mlpOnnx,
  mlpWeights,
  seededFloats,
  MLP_DIMS,
} from '../../test-support/ort-test-models.js';

const f32 = (values: number[]): TensorData => ({
  dtype: 'float32',
  dims: [values.length],
  data: Float32Array.from(values),
});

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isFlowfleetError(error)) return error.code;
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('OrtSessions', () => {
  let compute: ComputePool;
  let pool: OrtSessions;

  beforeAll(async () => {
    compute = await ComputePool.create({ threads: 1 });
    pool = await OrtSessions.attach(compute);
  });
  afterAll(async () => {
    await compute.close();
  });

  it('runs a model in a worker and returns correct values', async () => {
    const session = await pool.createSession(addModel());
    const out = await pool.run(session, { a: f32([1, 2, 3]), b: f32([10, 20, 30.5]) });
    expect(out['y']?.dtype).toBe('float32');
    expect(out['y']?.dims).toEqual([3]);
    expect([...(out['y']?.data as Float32Array)]).toEqual([11, 22, 33.5]);
  });

  it('round-trips int64 tensors as BigInt64Array', async () => {
    const session = await pool.createSession(addModel('int64'));
    const a: TensorData = { dtype: 'int64', dims: [2], data: BigInt64Array.from([2n ** 40n, -5n]) };
    const out = await pool.run(session, { a, b: a });
    expect(out['y']?.data).toBeInstanceOf(BigInt64Array);
    expect([...(out['y']?.data as BigInt64Array)]).toEqual([2n ** 41n, -10n]);
  });

  it('transfers outputs (and inputs when allowed) instead of copying them', async () => {
    const session = await pool.createSession(addModel());
    const [before] = await pool.stats();
    const a = f32([1, 2]);
    const b = f32([3, 4]);
    const out = await pool.run(session, { a, b }, { transferInputs: true });
    const [after] = await pool.stats();
    // The worker checks its output buffers are detached after posting: they moved, not copied.
    expect(after!.outputBuffersTransferred - before!.outputBuffersTransferred).toBe(1);
    expect(after!.outputBytesTransferred - before!.outputBytesTransferred).toBe(8);
    expect(out['y']?.data.buffer.byteLength).toBe(8);
    // The caller allowed the transfer, so its input arrays are now detached.
    expect(a.data.byteLength).toBe(0);
    expect(b.data.byteLength).toBe(0);
    const kept = f32([1, 2]);
    await pool.run(session, { a: kept, b: f32([0, 0]) });
    expect(kept.data.byteLength).toBe(8);
  });

  it('uploads a weight set once and reuses it across runs', async () => {
    const session = await pool.createSession(mlpOnnx({ form: 'eager' }), { replicate: true });
    const weights = { id: 'mlp@1', tensors: mlpWeights(7) };
    const [before] = await pool.stats();
    const x: TensorData = {
      dtype: 'float32',
      dims: [2, MLP_DIMS.in],
      data: seededFloats(3, 2 * MLP_DIMS.in),
    };
    const first = await pool.run(session, { x }, { weights });
    for (let i = 0; i < 4; i++) {
      const again = await pool.run(session, { x }, { weights });
      expect(again['y']?.data).toEqual(first['y']?.data);
    }
    const [after] = await pool.stats();
    expect(after!.weightUploads - before!.weightUploads).toBe(1);
    expect(after!.weightSetsLive - before!.weightSetsLive).toBe(1);
    expect(after!.runs - before!.runs).toBe(5);
    await pool.releaseWeights('mlp@1');
    const [released] = await pool.stats();
    expect(released!.weightSetsLive).toBe(before!.weightSetsLive);
    // A run after the release uploads the set again.
    const again = await pool.run(session, { x }, { weights });
    expect(again['y']?.data).toEqual(first['y']?.data);
    expect((await pool.stats())[0]!.weightUploads - after!.weightUploads).toBe(1);
    await pool.releaseWeights('mlp@1');
  });

  it('runs on a shared weight set: shared on upload, copied for ONNX Runtime only where its binding refuses shared memory', async () => {
    const session = await pool.createSession(mlpOnnx({ form: 'eager' }), { replicate: true });
    const x: TensorData = {
      dtype: 'float32',
      dims: [2, MLP_DIMS.in],
      data: seededFloats(3, 2 * MLP_DIMS.in),
    };
    const plain = { id: 'mlp-plain@1', tensors: mlpWeights(7) };
    // TEST-ONLY weight set: main writes a sentinel into it after the upload (see below).
    const shared = { id: 'mlp-shared@1', tensors: sharedTensors(mlpWeights(7)) };
    const bytes = [...shared.tensors.values()].reduce((n, t) => n + t.data.byteLength, 0);
    const expected = await pool.run(session, { x }, { weights: plain });
    const [before] = await pool.stats();
    const first = await pool.run(session, { x }, { weights: shared });
    expect(first['y']?.data).toEqual(expected['y']?.data);
    const [after] = await pool.stats();
    expect(after!.weightBytesShared - before!.weightBytesShared).toBe(bytes);
    expect(after!.weightBytesCopied - before!.weightBytesCopied).toBe(0);
    const privateBytes = after!.weightBytesPrivateCopies - before!.weightBytesPrivateCopies;
    console.info(
      `onnxruntime-node ${privateBytes === 0 ? 'reads' : 'refuses'} SharedArrayBuffer tensors on Node ${process.version}`,
    );
    expect([0, bytes]).toContain(privateBytes);
    // Whichever it is, the counter tells the truth: a sentinel written by main reaches the
    // session exactly when the thread feeds ONNX Runtime the shared memory itself.
    for (const tensor of shared.tensors.values()) (tensor.data as Float32Array).fill(0);
    const again = await pool.run(session, { x }, { weights: shared });
    const unchanged = [...(again['y']!.data as Float32Array)].every(
      (v, i) => v === (first['y']!.data as Float32Array)[i],
    );
    expect(unchanged).toBe(privateBytes === bytes);
    await pool.releaseWeights(plain.id);
    await pool.releaseWeights(shared.id);
  });

  it('probes each provider once, and its answer is what a session with that provider does', async () => {
    expect(pool.cachedProbe('cuda')).toBeUndefined();
    const probes = await pool.probeAll();
    console.info(JSON.stringify(probes, null, 2));
    expect(probes.cpu).toMatchObject({ available: true, bundled: true });
    for (const provider of ['cpu', 'cuda', 'webgpu'] as const) {
      const probe = probes[provider];
      expect(probe.provider).toBe(provider);
      expect(probe.reason.length).toBeGreaterThan(0);
      // The verdict holds for a real session, not only for the probe: an available provider runs
      // a model, an unavailable one fails session creation with the same runtime message.
      const created = pool.createSession(addModel(), { provider });
      if (probe.available) {
        const out = await pool.run(await created, { a: f32([1, 2]), b: f32([3, 4]) });
        expect([...(out['y']?.data as Float32Array)]).toEqual([4, 6]);
      } else {
        await expect(created).rejects.toMatchObject({ code: 'BACK_ORT_SESSION_FAILED' });
        await expect(created).rejects.toThrow(probe.reason.split('\n')[0]!.slice(0, 60));
      }
    }
    // A provider the npm package does not bundle cannot be available.
    for (const probe of Object.values(probes)) {
      if (!probe.bundled) expect(probe.available).toBe(false);
    }
    // Cached: probing again does not re-run.
    expect(pool.cachedProbe('cuda')).toEqual(probes.cuda);
    expect(await pool.probe('webgpu')).toBe(probes.webgpu);
  });

  it('reports runtime failures as coded errors carrying the runtime message', async () => {
    const session = await pool.createSession(addModel());
    const wrongFeed = pool.run(session, { a: f32([1]), nope: f32([1]) });
    await expect(wrongFeed).rejects.toMatchObject({ code: 'BACK_ORT_RUN_FAILED' });
    await expect(wrongFeed).rejects.toHaveProperty('cause.message', expect.stringMatching(/\w+/));
    const garbage = pool.createSession(Uint8Array.from([1, 2, 3, 4]));
    await expect(garbage).rejects.toMatchObject({ code: 'BACK_ORT_SESSION_FAILED' });
    expect(await codeOf(pool.run('ort-session-nope', {}))).toBe('BACK_ORT_UNKNOWN_SESSION');
  });

  it('releases sessions in the worker', async () => {
    const session = await pool.createSession(PROBE_MODEL_BYTES);
    const [before] = await pool.stats();
    await pool.releaseSession(session);
    const [after] = await pool.stats();
    expect(after!.sessionsLive).toBe(before!.sessionsLive - 1);
    expect(await codeOf(pool.run(session, { x: f32([1]) }))).toBe('BACK_ORT_UNKNOWN_SESSION');
  });
});

describe('OrtSessions faults and shutdown', () => {
  it('rejects the calls in flight with a coded error when a thread dies, then recovers', async () => {
    const compute = await ComputePool.create({ threads: 1 });
    const pool = await OrtSessions.attach(compute);
    try {
      const shared = await pool.createSession(addModel(), { replicate: true });
      const pinned = await pool.createSession(addModel());
      const inFlight = [1, 2, 3].map((v) => pool.run(shared, { a: f32([v]), b: f32([v]) }));
      compute.exitThreadForTesting(0, 70);
      const settled = await Promise.allSettled(inFlight);
      for (const result of settled) {
        expect(result.status).toBe('rejected');
        const reason = (result as PromiseRejectedResult).reason as unknown;
        expect(isFlowfleetError(reason, 'PLAT_COMPUTE_THREAD_EXITED')).toBe(true);
        expect(reason).toHaveProperty('details.exitCode', 70);
      }
      // The replacement thread has ONNX Runtime loaded again and rebuilds the replicable session
      // on demand; the pinned one died with its thread.
      const out = await pool.run(shared, { a: f32([2]), b: f32([5]) });
      expect([...(out['y']?.data as Float32Array)]).toEqual([7]);
      expect(await codeOf(pool.run(pinned, { a: f32([1]), b: f32([1]) }))).toBe(
        'BACK_ORT_UNKNOWN_SESSION',
      );
    } finally {
      await compute.close();
    }
  });

  it('stops with its pool: calls in flight and later calls reject with the pool closed', async () => {
    const compute = await ComputePool.create({ threads: 2 });
    const pool = await OrtSessions.attach(compute);
    const session = await pool.createSession(matmulChainModel(256, 8));
    const square: TensorData = {
      dtype: 'float32',
      dims: [256, 256],
      data: seededFloats(1, 256 * 256),
    };
    // Settle into values at once: the rejections land while close() is awaited.
    const outcomes = [1, 2, 3].map((i) =>
      pool.run(session, { x: square, w: square }).then(
        () => `resolved ${i}`,
        (error: unknown) => (isFlowfleetError(error) ? error.code : 'other'),
      ),
    );
    await compute.close();
    // The forwards queued behind the running one never ran: cut off with the pool closed.
    expect(await outcomes[2]).toBe('PLAT_COMPUTE_POOL_CLOSED');
    for (const outcome of await Promise.all(outcomes)) {
      expect(outcome).toMatch(/^(resolved \d|PLAT_COMPUTE_POOL_CLOSED)$/);
    }
    expect(await codeOf(pool.run(session, {}))).toBe('PLAT_COMPUTE_POOL_CLOSED');
    expect(await codeOf(pool.createSession(addModel()))).toBe('PLAT_COMPUTE_POOL_CLOSED');
  });
});
