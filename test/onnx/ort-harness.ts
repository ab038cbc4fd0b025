// Shared helpers of the ONNX graph tests: sessions with the options that keep the eager and
// captured forms bit-identical (DESIGN.md §8), feeds from TensorData, and error figures.
import * as ort from 'onnxruntime-node';
import { gaussianNoise } from '@flowfleet/numerics';
import { unsharedTensor, type TensorData } from '@flowfleet/platform';

ort.env.logLevel = 'fatal';

export { ort };

/** A session with pre-packing off, level `basic`, no spinning (the bit-identity settings). */
export function createSession(bytes: Uint8Array, threads = 1): Promise<ort.InferenceSession> {
  return ort.InferenceSession.create(bytes, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'basic',
    intraOpNumThreads: threads,
    extra: { session: { disable_prepacking: '1', 'intra_op.allow_spinning': '0' } },
  });
}

/** An ORT tensor over the same data (no copy; shared weights get an ordinary copy, see `unsharedTensor`). */
export function toOrt(shared: TensorData): ort.Tensor {
  const tensor = unsharedTensor(shared);
  const dims = [...tensor.dims];
  if (tensor.data instanceof BigInt64Array) return new ort.Tensor('int64', tensor.data, dims);
  if (tensor.data instanceof Int32Array) return new ort.Tensor('int32', tensor.data, dims);
  return new ort.Tensor('float32', tensor.data, dims);
}

/** Feeds for a session: named tensors plus every weight under its state_dict name. */
export function feedsOf(
  inputs: Readonly<Record<string, TensorData>>,
  weights?: ReadonlyMap<string, TensorData>,
): Record<string, ort.Tensor> {
  const feeds: Record<string, ort.Tensor> = {};
  for (const [name, t] of Object.entries(inputs)) feeds[name] = toOrt(t);
  for (const [name, t] of weights ?? []) feeds[name] = toOrt(t);
  return feeds;
}

/** Runs a session and returns one float32 output. */
export async function runFloat(
  session: ort.InferenceSession,
  feeds: Record<string, ort.Tensor>,
  output: string,
): Promise<{ data: Float32Array; dims: readonly number[] }> {
  const result = await session.run(feeds);
  const tensor = result[output];
  if (tensor === undefined || !(tensor.data instanceof Float32Array)) {
    throw new Error(`no float32 output ${output}`);
  }
  return { data: tensor.data, dims: tensor.dims };
}

/** A float32 tensor of N(0, scale²) values from the Philox stream (seed, stream). */
export function gaussianTensor(
  seed: number,
  stream: number,
  dims: number[],
  scale = 1,
): TensorData {
  const n = dims.reduce((a, b) => a * b, 1);
  const data = gaussianNoise(seed, stream, n);
  for (let i = 0; i < n; i++) data[i] = scale * data[i]!;
  return { dtype: 'float32', dims, data };
}

/** Max-abs, max elementwise-rel and norm-relative (‖a − ref‖₂ / ‖ref‖₂) errors of a vs ref. */
export interface ErrorFigures {
  readonly maxAbs: number;
  readonly maxRel: number;
  readonly normRel: number;
  /** Max elementwise-rel over elements with |ref| ≥ 1 % of max|ref| (away from zero crossings). */
  readonly maxRelSignificant: number;
  readonly maxAbsRef: number;
}

export function errorFigures(a: Float32Array, ref: Float32Array): ErrorFigures {
  if (a.length !== ref.length) throw new Error(`length ${a.length} vs ${ref.length}`);
  let maxAbs = 0;
  let maxRel = 0;
  let diff2 = 0;
  let ref2 = 0;
  let maxAbsRef = 0;
  for (let i = 0; i < a.length; i++) {
    const r = ref[i]!;
    const d = Math.abs(a[i]! - r);
    maxAbs = Math.max(maxAbs, d);
    if (r !== 0) maxRel = Math.max(maxRel, d / Math.abs(r));
    else if (d !== 0) maxRel = Infinity;
    diff2 += d * d;
    ref2 += r * r;
    maxAbsRef = Math.max(maxAbsRef, Math.abs(r));
  }
  let maxRelSignificant = 0;
  for (let i = 0; i < a.length; i++) {
    const r = Math.abs(ref[i]!);
    if (r >= 0.01 * maxAbsRef) {
      maxRelSignificant = Math.max(maxRelSignificant, Math.abs(a[i]! - ref[i]!) / r);
    }
  }
  return { maxAbs, maxRel, normRel: Math.sqrt(diff2 / ref2), maxRelSignificant, maxAbsRef };
}

/** Index of the first element whose bits differ, or -1 when the arrays are bit-identical. */
export function firstBitDifference(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  const ua = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const ub = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < ua.length; i++) if (ua[i] !== ub[i]) return i;
  return -1;
}
