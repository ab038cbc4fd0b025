import { compareCodePoints } from '../code-point-order.js';
import type { SafetensorsTensor } from './dtypes.js';
import { safetensorsInvalid } from './safetensors-error.js';
import { safetensorsLayout } from './safetensors-layout.js';
import { bytesOfTensor } from './tensor-bytes.js';

/** Tensors to write, by name: a map or a plain record. */
export type SafetensorsTensors =
  ReadonlyMap<string, SafetensorsTensor> | Readonly<Record<string, SafetensorsTensor>>;

/**
 * Encodes tensors as one safetensors file, deterministically, in the codec's one layout
 * (`safetensorsLayout`: name order, contiguous data, canonical header padded to 8 bytes). For a
 * file too large to hold in memory, `SafetensorsFileWriter` writes the same bytes tensor by tensor.
 * @throws FMT_SAFETENSORS_INVALID when a tensor's array, shape or values do not match its dtype
 *   (`wrong-array`, `invalid-shape`, `size-mismatch`, `invalid-bool`), a name is empty or
 *   `__metadata__`, or a metadata value is not a string (`metadata-not-strings`)
 */
export function writeSafetensors(
  tensors: SafetensorsTensors,
  metadata: Readonly<Record<string, string>> = {},
): Uint8Array {
  const entries = (tensors instanceof Map ? [...tensors] : Object.entries(tensors)).sort(
    ([a], [b]) => compareCodePoints(a, b),
  );
  if (!Object.values(metadata).every((v) => typeof v === 'string')) {
    throw safetensorsInvalid('metadata-not-strings', '__metadata__ values must be strings');
  }
  const chunks = entries.map(([name, tensor]) => bytesOfTensor(name, tensor));
  const layout = safetensorsLayout(
    entries.map(([name, tensor]) => ({ name, dtype: tensor.dtype, shape: tensor.shape })),
    metadata,
  );
  const out = new Uint8Array(layout.fileBytes);
  out.set(layout.head, 0);
  let at = layout.dataStart;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
