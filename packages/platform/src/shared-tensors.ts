import type { TensorData } from './component-types.js';

/**
 * The one place weight tensors get shared memory. A weight version is held once per process:
 * its values sit in SharedArrayBuffers, so `ComputePool.ensureWeights` posting them to a compute
 * thread shares the memory instead of copying it, and releasing the version frees it once the
 * main thread and every thread have dropped it. Whoever materialises a weight version (checkpoint
 * decode, a synced tensor's decode, a LoRA merge, initial weights) passes each tensor through
 * `sharedTensor` as it makes it — one tensor at a time, so a version is never held twice.
 *
 * Shared tensors are immutable by contract: rollouts in every thread may read a version at any
 * time, so whatever derives a new version (a LoRA merge) writes a new buffer.
 */

/** True when `tensor`'s values are a whole SharedArrayBuffer of their own (posting shares it). */
export function isSharedTensor(tensor: TensorData): boolean {
  const { data } = tensor;
  return (
    data.buffer instanceof SharedArrayBuffer &&
    data.byteOffset === 0 &&
    data.byteLength === data.buffer.byteLength
  );
}

/** A zero-filled Float32Array of `length` over a SharedArrayBuffer of its own. */
export function sharedFloat32Array(length: number): Float32Array {
  return new Float32Array(new SharedArrayBuffer(length * Float32Array.BYTES_PER_ELEMENT));
}

function sharedCopy<T extends TensorData['data']>(data: T): T {
  const Ctor = data.constructor as new (buffer: SharedArrayBuffer) => T;
  const copy = new Ctor(new SharedArrayBuffer(data.byteLength));
  (copy as unknown as { set(values: T): void }).set(data);
  return copy;
}

/**
 * `tensor` with its values in a SharedArrayBuffer of their own: the tensor itself when they
 * already are, else a copy (a view of a larger or an ordinary buffer — e.g. a file read — is
 * copied, so the rest of that buffer is not kept alive and never crosses to a thread).
 */
export function sharedTensor(tensor: TensorData): TensorData {
  if (isSharedTensor(tensor)) return tensor;
  return { dtype: tensor.dtype, dims: tensor.dims, data: sharedCopy(tensor.data) } as TensorData;
}

/** Every tensor of `tensors` through `sharedTensor` (same names, same order). */
export function sharedTensors(tensors: ReadonlyMap<string, TensorData>): Map<string, TensorData> {
  return new Map([...tensors].map(([name, tensor]) => [name, sharedTensor(tensor)]));
}

/**
 * `tensor` with its values in an ordinary ArrayBuffer: the tensor itself when they already are,
 * else a copy. For code that hands a weight tensor to onnxruntime-node itself (not through the
 * compute pool): its binding refuses SharedArrayBuffer memory on Node 20 (`run`: "Invalid
 * argument"), as the ORT handler's probe finds.
 */
export function unsharedTensor(tensor: TensorData): TensorData {
  if (!(tensor.data.buffer instanceof SharedArrayBuffer)) return tensor;
  return { dtype: tensor.dtype, dims: tensor.dims, data: tensor.data.slice() } as TensorData;
}
