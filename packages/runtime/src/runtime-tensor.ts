import type { TensorData } from '@flowfleet/platform';

/** Element types a runtime tensor may hold: the component dtypes plus float64 (scheduler scalars). */
export type RuntimeDtype = 'float32' | 'float64' | 'int32' | 'int64';

/** A dense row-major tensor the runtime binds into a static workspace. */
export interface RuntimeTensor {
  readonly dtype: RuntimeDtype;
  readonly dims: readonly number[];
  readonly data: Float32Array | Float64Array | Int32Array | BigInt64Array;
}

/** Named tensors: the inputs of a work plan's capturable form. */
export type RuntimeTensorMap = Readonly<Record<string, RuntimeTensor>>;

/** The product of `dims` (1 for a scalar). */
export function elementCount(dims: readonly number[]): number {
  let count = 1;
  for (const d of dims) count *= d;
  return count;
}

/** True when both dim lists are equal element by element. */
export function sameDims(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/** A zero-filled tensor with the same dtype and dims as `like`. */
export function allocateLike(like: RuntimeTensor): RuntimeTensor {
  const n = elementCount(like.dims);
  const dims = [...like.dims];
  switch (like.dtype) {
    case 'float32':
      return { dtype: 'float32', dims, data: new Float32Array(n) };
    case 'float64':
      return { dtype: 'float64', dims, data: new Float64Array(n) };
    case 'int32':
      return { dtype: 'int32', dims, data: new Int32Array(n) };
    case 'int64':
      return { dtype: 'int64', dims, data: new BigInt64Array(n) };
  }
}

/** Bytes a tensor's data occupies. */
export function tensorBytes(tensor: RuntimeTensor): number {
  return tensor.data.byteLength;
}

/** A float32 component tensor over `data` (no copy). */
export function f32Tensor(data: Float32Array, dims: readonly number[]): TensorData {
  return { dtype: 'float32', dims, data };
}

/** Narrows a runtime tensor to a component tensor (float64 never crosses to a component). */
export function asComponentTensor(tensor: RuntimeTensor): TensorData {
  if (tensor.dtype === 'float64' || tensor.data instanceof Float64Array) {
    throw new TypeError('a float64 tensor cannot be a component input');
  }
  return tensor as TensorData;
}
