import type { RuntimeTensor } from '@flowfleet/models';

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
