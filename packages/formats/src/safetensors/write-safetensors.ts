import { canonicalJson } from '../canonical-json.js';
import { compareCodePoints } from '../code-point-order.js';
import type { SafetensorsTensor } from './dtypes.js';
import { safetensorsInvalid } from './safetensors-error.js';
import { METADATA_KEY } from './safetensors-header.js';
import { bytesOfTensor } from './tensor-bytes.js';

/** Tensors to write, by name: a map or a plain record. */
export type SafetensorsTensors =
  ReadonlyMap<string, SafetensorsTensor> | Readonly<Record<string, SafetensorsTensor>>;

/**
 * Encodes tensors as one safetensors file, deterministically: tensors in name (code point) order,
 * their data contiguous from offset 0 in that order, little-endian; the header is canonical JSON
 * (keys sorted by code point at every depth, no whitespace), `__metadata__` included only when
 * `metadata` has a key, padded with spaces to a multiple of 8 bytes so every tensor starts
 * 8-byte aligned in a buffer that does.
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
  // Null prototype: a tensor named `__proto__` must become a key, not the object's prototype.
  const header = Object.create(null) as Record<string, unknown>;
  if (Object.keys(metadata).length > 0) header[METADATA_KEY] = metadata;
  const chunks: Uint8Array[] = [];
  let offset = 0;
  for (const [name, tensor] of entries) {
    const bytes = bytesOfTensor(name, tensor);
    header[name] = {
      dtype: tensor.dtype,
      shape: tensor.shape,
      data_offsets: [offset, offset + bytes.length],
    };
    chunks.push(bytes);
    offset += bytes.length;
  }
  const json = new TextEncoder().encode(canonicalJson(header));
  const headerBytes = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + headerBytes + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes), true);
  out.fill(0x20, 8, 8 + headerBytes);
  out.set(json, 8);
  let at = 8 + headerBytes;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
