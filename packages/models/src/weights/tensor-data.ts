import { bfloat16ToFloat32, float16ToFloat32, type SafetensorsTensor } from '@flowfleet/formats';
import type { TensorData } from '@flowfleet/platform';

/**
 * The one conversion from a safetensors tensor (formats: `dtype: 'F32'`, `shape`) to the
 * platform's TensorData (`dtype: 'float32'`, `dims`). F32 keeps its array (a view of the file
 * buffer when formats gave one); F16 and BF16 widen exactly to float32; F64 rounds to float32
 * (weights are float32 everywhere); the integer dtypes widen to int32, and I64 stays int64.
 */
export function tensorDataOf(tensor: SafetensorsTensor): TensorData {
  const dims = tensor.shape;
  switch (tensor.dtype) {
    case 'F32':
      return { dtype: 'float32', dims, data: tensor.data };
    case 'F16':
      return { dtype: 'float32', dims, data: float16ToFloat32(tensor.data) };
    case 'BF16':
      return { dtype: 'float32', dims, data: bfloat16ToFloat32(tensor.data) };
    case 'F64':
      return { dtype: 'float32', dims, data: Float32Array.from(tensor.data) };
    case 'I64':
      return { dtype: 'int64', dims, data: tensor.data };
    case 'I32':
      return { dtype: 'int32', dims, data: tensor.data };
    case 'I16':
    case 'I8':
    case 'U8':
    case 'BOOL':
      return { dtype: 'int32', dims, data: Int32Array.from(tensor.data) };
  }
}

/** The safetensors tensor of a TensorData (float32 → F32, int32 → I32, int64 → I64), no copy. */
export function safetensorsOf(tensor: TensorData): SafetensorsTensor {
  const shape = tensor.dims;
  switch (tensor.dtype) {
    case 'float32':
      return { dtype: 'F32', shape, data: tensor.data as Float32Array };
    case 'int32':
      return { dtype: 'I32', shape, data: tensor.data as Int32Array };
    case 'int64':
      return { dtype: 'I64', shape, data: tensor.data as BigInt64Array };
  }
}
