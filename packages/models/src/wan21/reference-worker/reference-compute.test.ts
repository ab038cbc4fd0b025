import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFlowfleetError } from '@flowfleet/errors';
import { gaussianNoise } from '@flowfleet/numerics';
import {
  ComputePool,
  type ComponentForward,
  type TensorMap,
  type WeightSet,
} from '@flowfleet/platform';
import {
  createDitReferenceFactory,
  createTextEncoderReferenceFactory,
} from '../components/reference-components.js';
import { initWeights } from '../init-weights.js';
import { ditForward } from '../reference/dit-forward.js';
import { DitWorkspace, ditWorkspaceShape } from '../reference/dit-workspace.js';
import { textEncoderForward } from '../reference/text-encoder-forward.js';
import { tokenize } from '../tokenize.js';
import { WAN21_MINI } from '../wan21-config.js';
import { ReferenceCompute } from './reference-compute.js';

const config = WAN21_MINI;
const dit1: WeightSet = { id: 'dit@1', tensors: initWeights(config, 1, 'dit') };
const dit2: WeightSet = { id: 'dit@2', tensors: initWeights(config, 2, 'dit') };
const te1: WeightSet = { id: 'te@1', tensors: initWeights(config, 1, 'text_encoder') };
const LATENT = [2, 4, 2, 8, 8] as const;
const CONTEXT = [2, config.textLen, config.textDim] as const;

function sameBits(a: ArrayBufferView, b: ArrayBufferView): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(
    Buffer.from(b.buffer, b.byteOffset, b.byteLength),
  );
}

function ditInputs(seed: number): TensorMap {
  const n = LATENT.reduce((a, b) => a * b, 1);
  return {
    latent: { dtype: 'float32', dims: [...LATENT], data: gaussianNoise(seed, 0, n) },
    timestep: { dtype: 'float32', dims: [2], data: Float32Array.of(937.5, 250) },
    context: {
      dtype: 'float32',
      dims: [...CONTEXT],
      data: gaussianNoise(seed, 1, CONTEXT[0] * CONTEXT[1] * CONTEXT[2]),
    },
  };
}

function direct(inputs: TensorMap, weights: WeightSet): Float32Array {
  return ditForward(weights.tensors, config, {
    latent: inputs['latent']!.data as Float32Array,
    dims: [...LATENT],
    timestep: inputs['timestep']!.data as Float32Array,
    context: inputs['context']!.data as Float32Array,
  });
}

const dimsOf = (inputs: TensorMap) =>
  Object.fromEntries(Object.entries(inputs).map(([name, t]) => [name, t.dims]));

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return isFlowfleetError(error) ? error.code : `not coded: ${String(error)}`;
  }
  return 'no error';
}

const specOf = (kind: string) => ({ id: kind, kind, factory: () => undefined as never });

describe('TS reference components in the compute pool', () => {
  let compute: ComputePool;
  let pool: ReferenceCompute;
  const open: ComponentForward[] = [];
  const build = async (kind: 'dit' | 'text_encoder', placement: 'worker' | 'caller' = 'worker') => {
    const factory = (
      kind === 'dit' ? createDitReferenceFactory : createTextEncoderReferenceFactory
    )(config, { placement });
    const component = (await factory(specOf(kind), undefined, {
      pool: compute,
    })) as ComponentForward;
    open.push(component);
    return component;
  };

  beforeAll(async () => {
    compute = await ComputePool.create({ threads: 1 });
    pool = await ReferenceCompute.attach(compute);
  });
  afterAll(async () => {
    await Promise.all(open.map((c) => c.dispose()));
    await compute.close();
  });

  it('gives the same bits as the in-thread forward, eager and captured', async () => {
    const worker = await build('dit');
    const caller = await build('dit', 'caller');
    const inputs = ditInputs(3);
    const expected = direct(inputs, dit1);
    const [a, b] = [await worker.run(inputs, dit1), await worker.run(inputs, dit1)];
    const inThread = await caller.run(inputs, dit1);
    expect(a['velocity']!.dims).toEqual([...LATENT]);
    expect(sameBits(a['velocity']!.data, expected)).toBe(true);
    expect(sameBits(b['velocity']!.data, expected)).toBe(true);
    expect(sameBits(inThread['velocity']!.data, expected)).toBe(true);
    const captured = await worker.capture!(dit1, dimsOf(inputs));
    const replayed = await captured.run(inputs);
    expect(sameBits(replayed['velocity']!.data, expected)).toBe(true);
    // A different weight set gives different bits (the check above can fail).
    const other = await worker.run(inputs, dit2);
    expect(sameBits(other['velocity']!.data, expected)).toBe(false);
    expect(sameBits(other['velocity']!.data, direct(inputs, dit2))).toBe(true);
    await captured.dispose();

    const encoder = await build('text_encoder');
    const ids = tokenize(['a red fox', ''], config);
    const context = await encoder.run(
      { tokens: { dtype: 'int32', dims: [2, config.textLen], data: ids } },
      te1,
    );
    expect(sameBits(context['context']!.data, textEncoderForward(te1.tensors, ids, config))).toBe(
      true,
    );
  });

  it('uploads a weight set once per id, transfers outputs and leaves the caller its inputs', async () => {
    const dit = await build('dit');
    const inputs = ditInputs(5);
    const [before] = await pool.stats();
    for (let i = 0; i < 3; i++) await dit.run(inputs, { ...dit1, id: 'dit@once' });
    const [after] = await pool.stats();
    expect(after!.weightUploads - before!.weightUploads).toBe(1);
    expect(after!.forwards - before!.forwards).toBe(3);
    // The worker saw its output buffers detach after posting: moved, not copied.
    expect(after!.outputBuffersTransferred - before!.outputBuffersTransferred).toBe(3);
    expect(after!.outputBytesTransferred - before!.outputBytesTransferred).toBe(
      3 * 4 * LATENT.reduce((x, y) => x * y, 1),
    );
    expect(inputs['latent']!.data.byteLength).toBeGreaterThan(0);
    await dit.releaseWeights!('dit@once');
    const [released] = await pool.stats();
    expect(released!.weightSetsLive).toBe(after!.weightSetsLive - 1);
    await dit.run(inputs, { ...dit1, id: 'dit@once' });
    const [again] = await pool.stats();
    expect(again!.weightUploads - after!.weightUploads).toBe(1);
  });

  it('captures a pinned workspace sized for its dims and refuses other dims', async () => {
    const dit = await build('dit');
    const inputs = ditInputs(7);
    const captured = await dit.capture!(dit1, dimsOf(inputs));
    const workspace = new DitWorkspace(config, ditWorkspaceShape(config, LATENT, config.textLen));
    expect(captured.bytesHeld).toBe(workspace.byteLength);
    expect(captured.bytesHeld).toBeGreaterThan(0);
    const [live] = await pool.stats();
    expect(live!.capturesLive).toBeGreaterThanOrEqual(1);
    const half = ditInputs(7);
    const wrong: TensorMap = {
      ...half,
      latent: { dtype: 'float32', dims: [2, 4, 2, 4, 16], data: half['latent']!.data },
    };
    expect(await codeOf(captured.run(wrong))).toBe('MODEL_INPUT_INVALID');
    expect(await codeOf(dit.capture!(dit1, { ...dimsOf(inputs), latent: [2, 4, 2, 7, 8] }))).toBe(
      'MODEL_INPUT_INVALID',
    );
    await captured.dispose();
    const [after] = await pool.stats();
    expect(after!.capturesLive).toBe(live!.capturesLive - 1);
    expect(await codeOf(captured.run(inputs))).toBe('MODEL_COMPONENT_DISPOSED');
  });

  it('rebuilds a worker-side coded error with its code and details', async () => {
    const dit = await build('dit');
    let error: unknown;
    await dit.run(ditInputs(1), te1).catch((e: unknown) => (error = e));
    expect(isFlowfleetError(error, 'MODEL_WEIGHTS_MISMATCH')).toBe(true);
    expect((error as { details: { missing: string[] } }).details.missing.length).toBeGreaterThan(0);
  });

  it('rejects calls in flight when a thread dies, then recovers on a replacement', async () => {
    const dit = await build('dit');
    const inputs = ditInputs(9);
    const captured = await dit.capture!(dit1, dimsOf(inputs));
    compute.exitThreadForTesting(0);
    const inFlight = [dit.run(inputs, dit1), captured.run(inputs)];
    expect(await Promise.all(inFlight.map(codeOf))).toEqual([
      'PLAT_COMPUTE_THREAD_EXITED',
      'PLAT_COMPUTE_THREAD_EXITED',
    ]);
    const expected = direct(inputs, dit1);
    // The replacement gets the weights again and the captured forward is re-materialised.
    const eager = await dit.run(inputs, dit1);
    const replay = await captured.run(inputs);
    expect(sameBits(eager['velocity']!.data, expected)).toBe(true);
    expect(sameBits(replay['velocity']!.data, expected)).toBe(true);
    await captured.dispose();
  });

  it('refuses use after dispose, after the pool is closed, and without a pool', async () => {
    const dit = await build('dit');
    await dit.dispose();
    expect(await codeOf(dit.run(ditInputs(1), dit1))).toBe('MODEL_COMPONENT_DISPOSED');
    const own = await ComputePool.create();
    const late = (await createDitReferenceFactory(config)(specOf('dit'), undefined, {
      pool: own,
    })) as ComponentForward;
    await own.close();
    await own.close();
    expect(await codeOf(late.run(ditInputs(1), dit1))).toBe('PLAT_COMPUTE_POOL_CLOSED');
    await late.dispose();
    const orphan = async () => createDitReferenceFactory(config)(specOf('dit'), undefined);
    expect(await codeOf(orphan())).toBe('MODEL_NO_COMPUTE_POOL');
  });
});
