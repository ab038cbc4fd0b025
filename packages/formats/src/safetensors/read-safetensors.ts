import type { SafetensorsTensor } from './dtypes.js';
import { parseSafetensorsHeader, readHeaderLength } from './safetensors-header.js';
import { tensorFromBytes } from './tensor-bytes.js';

/** A decoded safetensors file. */
export interface SafetensorsContents {
  /** Tensors by name, in name (code point) order. */
  readonly tensors: ReadonlyMap<string, SafetensorsTensor>;
  /** The `__metadata__` strings (empty when absent). */
  readonly metadata: Readonly<Record<string, string>>;
}

/** Options of `readSafetensors`. */
export interface ReadSafetensorsOptions {
  /**
   * Give every tensor its own copy of its bytes. Default false: tensors are views of `bytes`
   * wherever the host is little-endian and the data is aligned to the item size (always, for
   * files this codec writes into a buffer that starts 8-byte aligned).
   */
  readonly copy?: boolean;
}

/**
 * Decodes a safetensors buffer (u64 LE header length N, N bytes of JSON header, the data). The
 * whole header and layout are validated before any tensor is returned (see
 * `parseSafetensorsHeader`), and BOOL bytes are checked, so a bad file never yields a partial load.
 *
 * Ownership: unless `copy` is set, the returned arrays may share memory with `bytes` (no copy of a
 * downloaded blob). The caller hands `bytes` over: writing to it afterwards changes the tensors,
 * and the tensors keep the whole buffer alive.
 * @throws FMT_SAFETENSORS_INVALID with `details.reason`
 */
export function readSafetensors(
  bytes: Uint8Array,
  options: ReadSafetensorsOptions = {},
): SafetensorsContents {
  const headerBytes = readHeaderLength(bytes.subarray(0, 8), bytes.length);
  const header = parseSafetensorsHeader(bytes.subarray(8, 8 + headerBytes), bytes.length);
  const copy = options.copy === true;
  const tensors = new Map<string, SafetensorsTensor>();
  for (const [name, entry] of header.tensors) {
    const [begin, end] = entry.dataOffsets;
    const raw = bytes.subarray(header.dataStart + begin, header.dataStart + end);
    tensors.set(name, tensorFromBytes(name, entry.dtype, entry.shape, raw, copy));
  }
  return { tensors, metadata: header.metadata };
}
