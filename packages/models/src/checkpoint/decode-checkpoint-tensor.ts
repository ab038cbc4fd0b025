import { tensorFromBytes, type SafetensorsDtype } from '@flowfleet/formats';
import { sharedTensor, type TensorData } from '@flowfleet/platform';
import { tensorDataOf } from '../weights/tensor-data.js';
import type { CheckpointEntry } from './bind-checkpoint.js';

/**
 * One checkpoint tensor's raw little-endian bytes (a fetched byte range) as compute-dtype
 * TensorData in a SharedArrayBuffer of its own (`sharedTensor`: a weight version is held once,
 * shared with the compute threads): F32 is copied out of `raw`, F16 and BF16 widen exactly to
 * float32 — one tensor at a time, so a checkpoint is never held whole twice.
 * @throws FMT_SAFETENSORS_INVALID when the bytes do not fit the dtype and shape
 */
export function decodeCheckpointTensor(
  name: string,
  entry: CheckpointEntry,
  raw: Uint8Array,
): TensorData {
  return sharedTensor(
    tensorDataOf(tensorFromBytes(name, entry.dtype as SafetensorsDtype, entry.shape, raw, false)),
  );
}
