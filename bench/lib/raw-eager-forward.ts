// The raw ONNX Runtime baseline of bench:real: a card component's *eager* graph (weights as graph
// inputs, symbolic dims — the only form a 1.3B DiT has, ADR 015) opened straight on
// onnxruntime-node in the calling thread with the worker's session options, the weights wrapped
// as ort.Tensors once, no pool, no runtime.
import { loadOrt, onnxArtifactsOf, ortSessionOptions } from '@flowfleet/backends';
import type { ModelComponentSpec } from '@flowfleet/models';
import { unsharedTensor, type TensorData, type TensorMap } from '@flowfleet/platform';
import type { RawForward } from './raw-ort-sessions.js';

/** A RawForward on one eager session, timing each run. */
export interface RawEagerForward extends RawForward {
  /** Milliseconds of each `session.run` since the last call. */
  takeRunMs(): number[];
  /** Milliseconds `InferenceSession.create` took. */
  readonly createMs: number;
  release(): Promise<void>;
}

/** Opens the eager session of `spec` and binds `weights` (card names → float32) to it. */
export async function openRawEagerForward(
  spec: ModelComponentSpec,
  weights: ReadonlyMap<string, TensorData>,
  intraOpThreads: number,
): Promise<RawEagerForward> {
  const artifacts = onnxArtifactsOf(spec);
  const ort = await loadOrt();
  const started = performance.now();
  const session = await ort.InferenceSession.create(
    artifacts.buildOnnx({ form: 'eager' }),
    ortSessionOptions({ provider: 'cpu', intraOpThreads }),
  );
  const createMs = performance.now() - started;
  const toOrt = (t: TensorData) => new ort.Tensor(t.dtype, t.data, t.dims);
  // Weights in SharedArrayBuffers (loadCheckpoint's) get one private copy, as the worker's ORT
  // handler makes where onnxruntime-node refuses shared memory (Node 20: "Invalid argument").
  const own = unsharedTensor;
  const weightFeeds = Object.fromEntries(
    [...weights]
      .filter(([name]) => session.inputNames.includes(name))
      .map(([n, t]) => [n, toOrt(own(t))]),
  );
  let runs: number[] = [];
  return {
    createMs,
    async run(inputs: TensorMap) {
      const dims = Object.fromEntries(Object.entries(inputs).map(([n, t]) => [n, t.dims]));
      const feeds = { ...weightFeeds };
      for (const [name, t] of Object.entries({ ...artifacts.eagerInputs(dims), ...inputs })) {
        feeds[name] = toOrt(t);
      }
      const from = performance.now();
      const outputs = await session.run(feeds);
      runs.push(performance.now() - from);
      return Object.fromEntries(
        Object.entries(outputs).map(([name, t]) => [
          name,
          { dtype: t.type, dims: [...t.dims], data: t.data } as TensorData,
        ]),
      );
    },
    takeRunMs() {
      const taken = runs;
      runs = [];
      return taken;
    },
    release: () => session.release(),
  };
}
