import { describe, expect, it } from 'vitest';
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import { loadOrt } from './load-ort.js';
import { ortSessionOptions } from './session-options.js';
import { MLP_DIMS, mlpOnnx, mlpWeights, seededFloats } from '../../test-support/ort-test-models.js';

const BATCH = 4;

/** Runs the MLP eager (weights fed) and captured (weights baked) under `options`; counts differing outputs. */
async function differingElements(options: InferenceSession.SessionOptions): Promise<number> {
  const ort = await loadOrt();
  const weights = mlpWeights(3);
  const eager = await ort.InferenceSession.create(mlpOnnx({ form: 'eager' }), options);
  const captured = await ort.InferenceSession.create(
    mlpOnnx({ form: 'captured', weights, inputDims: { x: [BATCH, MLP_DIMS.in] } }),
    options,
  );
  try {
    const x = new ort.Tensor('float32', seededFloats(9, BATCH * MLP_DIMS.in), [BATCH, MLP_DIMS.in]);
    const feeds: Record<string, Tensor> = { x };
    for (const [name, t] of weights) feeds[name] = new ort.Tensor(t.dtype, t.data, t.dims);
    const e = (await eager.run(feeds))['y']?.data as Float32Array;
    const c = (await captured.run({ x }))['y']?.data as Float32Array;
    expect(e.length).toBe(BATCH * MLP_DIMS.out);
    return e.reduce((n, v, i) => n + (Object.is(v, c[i]) ? 0 : 1), 0);
  } finally {
    await eager.release();
    await captured.release();
  }
}

describe('ortSessionOptions', () => {
  it('asks for exactly one provider, level basic, no pre-packing, no spinning', () => {
    const options = ortSessionOptions({ provider: 'cuda', intraOpThreads: 2 });
    expect(options.executionProviders).toEqual(['cuda']);
    expect(options.graphOptimizationLevel).toBe('basic');
    expect(options.intraOpNumThreads).toBe(2);
    expect(options.extra).toEqual({
      session: {
        disable_prepacking: '1',
        'intra_op.allow_spinning': '0',
        'inter_op.allow_spinning': '0',
      },
    });
  });

  it('keeps weights-as-inputs and weights-as-initializers bit-identical', async () => {
    expect(await differingElements(ortSessionOptions({ provider: 'cpu', intraOpThreads: 1 }))).toBe(
      0,
    );
  });

  it('control: with pre-packing on, the two forms differ in the last bits', async () => {
    const options = ortSessionOptions({ provider: 'cpu', intraOpThreads: 1 });
    const prepacked = { ...options, extra: { session: { disable_prepacking: '0' } } };
    expect(await differingElements(prepacked)).toBeGreaterThan(0);
  });
});
