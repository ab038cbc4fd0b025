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
