import type { TensorData } from '../component-types.js';
import { isSharedTensor } from '../shared-tensors.js';

/**
 * What a compute thread offers each handler it loaded: its index and the weight sets uploaded to
 * it (`ComputePool.ensureWeights`), shared by every handler of the thread.
 */
export interface ComputeThreadContext {
  readonly threadIndex: number;
  /**
   * A weight set resident in this thread, as uploaded (the same Map object on every call, so a
   * handler may cache a converted form of it in a WeakMap).
   * @throws PLAT_COMPUTE_UNKNOWN_WEIGHTS when it was never uploaded here or was released.
   */
  weights(weightsId: string): ReadonlyMap<string, TensorData>;
}

/**
 * One backend's code inside a compute thread (ONNX Runtime sessions, the TS reference forward):
 * it keeps its resident state (sessions, workspaces, captures) in the object the factory returns,
 * and answers `handle(method, payload)`. A handler may throw a FlowfleetError: its code, message
 * and details reach the caller unchanged; any other throw reaches it as INTERNAL_ERROR.
 */
export interface ComputeHandler {
  /** Answers one call; return `transferReply(…)` / `tensorsReply(…)` to move buffers back. */
  handle(method: string, payload: unknown): unknown;
  /** Counters for `ComputePool.stats()`. */
  stats?(): Readonly<Record<string, number>>;
}

/**
 * The named export a handler module provides (`export const createComputeHandler: …`). It runs
 * once per thread when the pool loads the module; a throw fails the load.
 */
export type ComputeHandlerFactory = (
  context: ComputeThreadContext,
  options: unknown,
) => ComputeHandler | Promise<ComputeHandler>;

/** The export a handler module must name. */
export const COMPUTE_HANDLER_EXPORT = 'createComputeHandler';

/** A reply whose buffers are moved to the caller instead of copied. */
export class TransferReply {
  constructor(
    readonly value: unknown,
    readonly transfer: readonly ArrayBuffer[],
  ) {}
}

/** Replies `value`, moving `transfer` (the buffers must not be used by the thread afterwards). */
export function transferReply(value: unknown, transfer: readonly ArrayBuffer[]): TransferReply {
  return new TransferReply(value, transfer);
}

/**
 * A forward's inputs as a call sends them: compact copies whose buffers the call transfers, so
 * the caller keeps its arrays (often views into a static workspace or a loop's state) and only
 * the viewed bytes cross — one copy, where a structured clone copies twice and clones the whole
 * buffer a view sits in.
 */
export function packedTensors(inputs: Readonly<Record<string, TensorData>>): {
  readonly tensors: Record<string, TensorData>;
  readonly transfer: ArrayBuffer[];
} {
  const tensors: Record<string, TensorData> = {};
  const transfer: ArrayBuffer[] = [];
  for (const [name, tensor] of Object.entries(inputs)) {
    const data = tensor.data.slice();
    tensors[name] = { dtype: tensor.dtype, dims: [...tensor.dims], data } as TensorData;
    transfer.push(data.buffer as ArrayBuffer);
  }
  return { tensors, transfer };
}

/**
 * Replies a forward's outputs with their buffers moved: an output that is a view into a larger
 * buffer is copied to a buffer of its own first, so only its bytes cross; an output that is a
 * whole SharedArrayBuffer (`sharedTensor`, e.g. a merged weight) is shared as it is.
 */
export function tensorsReply(outputs: Readonly<Record<string, TensorData>>): TransferReply {
  const value: Record<string, TensorData> = {};
  const transfer = new Set<ArrayBuffer>();
  for (const [name, tensor] of Object.entries(outputs)) {
    const { data } = tensor;
    if (isSharedTensor(tensor)) {
      value[name] = tensor;
      continue;
    }
    const owned =
      !(data.buffer instanceof SharedArrayBuffer) &&
      data.byteOffset === 0 &&
      data.byteLength === data.buffer.byteLength &&
      !transfer.has(data.buffer);
    const sent = owned ? tensor : { ...tensor, data: data.slice() };
    value[name] = sent;
    transfer.add(sent.data.buffer as ArrayBuffer);
  }
  return new TransferReply(value, [...transfer]);
}
