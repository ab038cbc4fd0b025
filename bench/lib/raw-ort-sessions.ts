// The sessions of the raw ONNX Runtime baseline: the card's own captured graphs (the bytes the
// worker's captured sessions are built from: weights baked in, dims fixed), opened straight on
// onnxruntime-node in the calling thread with the worker's session options, no pool, no runtime.
import { loadOrt, onnxArtifactsOf, ortSessionOptions } from '@flowfleet/backends';
import type { ModelCard } from '@flowfleet/models';
import {
  unsharedTensor,
  type TensorData,
  type TensorMap,
  type WeightSet,
} from '@flowfleet/platform';

/** A forward the raw loop calls: named inputs in, named outputs out. */
export interface RawForward {
  run(inputs: TensorMap): Promise<Record<string, TensorData>>;
}

/** A RawForward on one ONNX Runtime session, timing its runs. */
export interface RawOrtForward extends RawForward {
  /** Milliseconds inside `session.run` since the last call. */
  takeRunMs(): number;
  /** Each `session.run` since the last call: [start, end] in µs of CLOCK_MONOTONIC. */
  takeRuns(): [number, number][];
  release(): Promise<void>;
}

/**
 * Opens a session on the card component `componentId`'s captured graph for `weights` and
 * `inputDims`, with `ortSessionOptions({provider: 'cpu', intraOpThreads})` — what the worker's
 * ORT pool opens when the runtime captures that component.
 */
export async function openRawOrtForward(
  card: ModelCard,
  componentId: string,
  weights: WeightSet,
  inputDims: Readonly<Record<string, readonly number[]>>,
  intraOpThreads: number,
): Promise<RawOrtForward> {
  const spec = card.components.find((component) => component.id === componentId);
  if (spec === undefined) throw new Error(`${card.id} has no component ${componentId}`);
  const artifacts = onnxArtifactsOf(spec);
  const model = artifacts.buildOnnx({ form: 'captured', weights: weights.tensors, inputDims });
  const ort = await loadOrt();
  const session = await ort.InferenceSession.create(
    model,
    ortSessionOptions({ provider: 'cpu', intraOpThreads }),
  );
  let runMs = 0;
  let runs: [number, number][] = [];
  const monoUs = () => Number(process.hrtime.bigint() / 1000n);
  return {
    async run(inputs) {
      const feeds = Object.fromEntries(
        Object.entries(inputs).map(([name, shared]) => {
          const t = unsharedTensor(shared);
          return [name, new ort.Tensor(t.dtype, t.data, t.dims)];
        }),
      );
      const started = performance.now();
      const from = monoUs();
      const outputs = await session.run(feeds);
      runs.push([from, monoUs()]);
      runMs += performance.now() - started;
      return Object.fromEntries(
        Object.entries(outputs).map(([name, t]) => [
          name,
          { dtype: t.type, dims: [...t.dims], data: t.data } as TensorData,
        ]),
      );
    },
    takeRunMs() {
      const ms = runMs;
      runMs = 0;
      return ms;
    },
    takeRuns() {
      const taken = runs;
      runs = [];
      return taken;
    },
    release: () => session.release(),
  };
}
