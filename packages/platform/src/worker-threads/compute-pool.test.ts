import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFlowfleetError } from '@flowfleet/errors';
import type { TensorData, WeightSet } from '../component-types.js';
import { sharedTensors } from '../shared-tensors.js';
import { ComputePool, type ComputeHandlerModule } from './compute-pool.js';
import { moduleWorkerUrl } from './spawn-module-worker.js';

const fixture: ComputeHandlerModule = {
  id: 'fixture',
  url: moduleWorkerUrl(
    import.meta.url,
    '../../test-support/worker-threads/compute-handler.fixture',
  ),
  options: { greeting: 'hi' },
};

const weights = (id: string, value: number): WeightSet => ({
  id,
  tensors: new Map<string, TensorData>([
    ['a', { dtype: 'float32', dims: [2], data: Float32Array.of(value, value) }],
    ['b', { dtype: 'float32', dims: [1], data: Float32Array.of(1) }],
  ]),
});

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return isFlowfleetError(error) ? error.code : `not coded: ${String(error)}`;
  }
  return 'no error';
}

describe('ComputePool', () => {
  let pool: ComputePool;
  beforeAll(async () => {
    pool = await ComputePool.create({ threads: 2 });
    await pool.load(fixture);
    await pool.load(fixture); // idempotent
  });
  afterAll(async () => {
    await pool.close();
  });

  it('loads a handler into every thread, keeps per-thread state, and routes to a thread', async () => {
    expect(pool.size).toBe(2);
    const [t0, t1] = pool.threads();
    expect(await t0!.call('fixture', 'hello', {})).toBe('hi from 0');
    expect(await t1!.call('fixture', 'hello', {})).toBe('hi from 1');
    await t1!.call('fixture', 'remember', { key: 'k', value: 42 });
    // State lives in the thread that was addressed, and only there.
    expect(await t1!.call('fixture', 'recall', { key: 'k' })).toBe(42);
    expect(await t0!.call('fixture', 'recall', { key: 'k' })).toBeNull();
    // The least loaded thread wins; among equals, the warmer one.
    const busy = t0!.call('fixture', 'hello', {});
    expect(pool.pick()).toBe(t1);
    await busy;
    expect(pool.pick((t) => (t === t1 ? 0 : 1))).toBe(t1);
    expect(pool.pick((t) => (t === t0 ? 0 : 1))).toBe(t0);
  });

  it('uploads a weight set once per thread and id, and re-uploads one released meanwhile', async () => {
    const thread = pool.threads()[0]!;
    const w = weights('w@1', 3);
    const before = (await pool.stats())[0]!;
    const sums = await Promise.all(
      [1, 2, 3].map(() =>
        pool.dispatch(thread, { weights: w }, () =>
          thread.call<number>('fixture', 'sumWeights', { weightsId: w.id }),
        ),
      ),
    );
    expect(sums).toEqual([7, 7, 7]);
    const after = (await pool.stats())[0]!;
    expect(after.weightUploads - before.weightUploads).toBe(1);
    expect(after.weightSetsLive).toBe(before.weightSetsLive + 1);
    expect(w.tensors.get('a')!.data.byteLength).toBe(8); // copied: the caller keeps its tensors
    expect(after.weightBytesCopied - before.weightBytesCopied).toBe(12);
    expect(after.weightBytesShared - before.weightBytesShared).toBe(0);
    await pool.releaseWeights(w.id);
    expect(await codeOf(thread.call('fixture', 'sumWeights', { weightsId: w.id }))).toBe(
      'PLAT_COMPUTE_UNKNOWN_WEIGHTS',
    );
    // A release racing a dispatch: the dispatch sees it and uploads again before it sends.
    const racing = pool.dispatch(thread, { weights: w }, () =>
      thread.call<number>('fixture', 'sumWeights', { weightsId: w.id }),
    );
    await pool.releaseWeights(w.id);
    expect(await racing).toBe(7);
    await pool.uploadWeights(weights('w@2', 1));
    for (const stats of await pool.stats()) expect(stats.weightSetsLive).toBeGreaterThan(0);
    await pool.releaseWeights('w@2');
    await pool.releaseWeights('never-uploaded');
  });

  it('shares a weight set in SharedArrayBuffers with every thread instead of copying it', async () => {
    // TEST-ONLY weight set: a resident set is immutable by contract; here main writes a sentinel
    // after the upload to show each thread reads the very memory main holds.
    const w: WeightSet = { id: 'shared@1', tensors: sharedTensors(weights('shared@1', 3).tensors) };
    const copied = weights('copied@1', 3);
    const before = await pool.stats();
    await pool.uploadWeights(w);
    await pool.uploadWeights(copied);
    const sum = (id: string) =>
      Promise.all(
        pool.threads().map((t) => t.call<number>('fixture', 'sumWeights', { weightsId: id })),
      );
    expect(await sum(w.id)).toEqual([7, 7]);
    (w.tensors.get('a')!.data as Float32Array)[0] = 100;
    (copied.tensors.get('a')!.data as Float32Array)[0] = 100;
    expect(await sum(w.id)).toEqual([104, 104]); // shared: the threads see main's write
    expect(await sum(copied.id)).toEqual([7, 7]); // copied: they do not
    const after = await pool.stats();
    for (const [i, stats] of after.entries()) {
      expect(stats.weightBytesShared - before[i]!.weightBytesShared).toBe(12);
      expect(stats.weightBytesCopied - before[i]!.weightBytesCopied).toBe(12);
    }
    await pool.releaseWeights(w.id);
    await pool.releaseWeights(copied.id);
  });

  it('moves reply buffers (and input buffers when asked) instead of copying them', async () => {
    const thread = pool.threads()[1]!;
    const before = (await pool.stats())[1]!;
    const x: TensorData = { dtype: 'float32', dims: [3], data: Float32Array.of(1, 2, 3) };
    const out = await thread.call<Record<string, TensorData>>('fixture', 'double', { x }, [
      x.data.buffer as ArrayBuffer,
    ]);
    expect([...(out['y']!.data as Float32Array)]).toEqual([2, 4, 6]);
    expect(x.data.byteLength).toBe(0); // the input moved
    const after = (await pool.stats())[1]!;
    expect(after.outputBuffersTransferred - before.outputBuffersTransferred).toBe(1);
    expect(after.outputBytesTransferred - before.outputBytesTransferred).toBe(12);
    expect(after.handlers['fixture']!['calls']).toBeGreaterThan(0);
  });

  it('rebuilds coded failures, reports uncoded ones as defects, and refuses unknown handlers', async () => {
    const thread = pool.threads()[0]!;
    const coded: unknown = await thread.call('fixture', 'coded', {}).catch((e: unknown) => e);
    expect(isFlowfleetError(coded, 'PLAT_PARITY_SHAPE')).toBe(true);
    expect(coded).toHaveProperty('details.thread', 0);
    const defect: unknown = await thread.call('fixture', 'nope', {}).catch((e: unknown) => e);
    expect(isFlowfleetError(defect, 'INTERNAL_ERROR')).toBe(true);
    expect((defect as Error).message).toMatch(/fixture\.nope failed: Error: no method nope/);
    expect(await codeOf(thread.call('absent', 'hello', {}))).toBe('PLAT_COMPUTE_HANDLER_FAILED');
    const broken = {
      id: 'broken',
      url: moduleWorkerUrl(
        import.meta.url,
        '../../test-support/worker-threads/broken-handler.fixture',
      ),
    };
    expect(await codeOf(pool.load(broken))).toBe('PLAT_INVALID_OVERRIDE');
    const bare = { id: 'bare', url: moduleWorkerUrl(import.meta.url, '../component-types') };
    expect(await codeOf(pool.load(bare))).toBe('PLAT_COMPUTE_HANDLER_FAILED');
    expect(await codeOf(pool.load({ ...fixture, url: bare.url }))).toBe(
      'PLAT_COMPUTE_HANDLER_FAILED',
    );
  });
});

describe('ComputePool faults and shutdown', () => {
  it('fails the calls in flight of a crashed thread, then replaces it with the handlers loaded', async () => {
    const pool = await ComputePool.create({ threads: 1 });
    try {
      await pool.load(fixture);
      const thread = pool.threads()[0]!;
      const w = weights('w@crash', 2);
      await pool.ensureWeights(thread, w);
      await thread.call('fixture', 'remember', { key: 'k', value: 1 });
      // Sent after the exit request: in flight when the thread dies, never answered.
      pool.exitThreadForTesting(0, 70);
      const inFlight = [1, 2, 3].map(() => thread.call('fixture', 'hello', {}));
      for (const result of await Promise.allSettled(inFlight)) {
        const reason = (result as PromiseRejectedResult).reason as unknown;
        expect(isFlowfleetError(reason, 'PLAT_COMPUTE_THREAD_EXITED')).toBe(true);
        expect(reason).toHaveProperty('details.exitCode', 70);
      }
      expect(pool.isCurrent(thread)).toBe(false);
      const replacement = pool.pick();
      expect(replacement).not.toBe(thread);
      expect(replacement.index).toBe(0);
      expect(await replacement.call('fixture', 'hello', {})).toBe('hi from 0');
      // Nothing else survived: state and weights are made again on use.
      expect(await replacement.call('fixture', 'recall', { key: 'k' })).toBeNull();
      expect(pool.hasWeights(replacement, w.id)).toBe(false);
      const sum = await pool.dispatch(replacement, { weights: w }, () =>
        replacement.call<number>('fixture', 'sumWeights', { weightsId: w.id }),
      );
      expect(sum).toBe(5);
    } finally {
      await pool.close();
    }
  });

  it('close() is idempotent, stops every thread and rejects calls in flight and later', async () => {
    const pool = await ComputePool.create({ threads: 2 });
    await pool.load(fixture);
    const thread = pool.threads()[1]!;
    const outcomes = [1, 2, 3].map(() =>
      thread.call('fixture', 'hello', {}).then(
        () => 'resolved',
        (error: unknown) => (isFlowfleetError(error) ? error.code : 'other'),
      ),
    );
    const first = pool.close();
    expect(pool.close()).toBe(first);
    await first;
    for (const outcome of await Promise.all(outcomes)) {
      expect(outcome).toMatch(/^(resolved|PLAT_COMPUTE_POOL_CLOSED)$/);
    }
    expect(pool.isClosed).toBe(true);
    expect(await codeOf(thread.call('fixture', 'hello', {}))).toBe('PLAT_COMPUTE_POOL_CLOSED');
    expect(() => pool.pick()).toThrow(/closed/);
    expect(await codeOf(pool.load(fixture))).toBe('PLAT_COMPUTE_POOL_CLOSED');
    expect(await codeOf(pool.stats())).toBe('PLAT_COMPUTE_POOL_CLOSED');
  });
});
