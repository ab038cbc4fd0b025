import { canonicalJson } from '../canonical-json.js';
import { compareCodePoints } from '../code-point-order.js';
import { SAFETENSORS_ITEM_BYTES, elementCount, type SafetensorsDtype } from './dtypes.js';
import { safetensorsInvalid } from './safetensors-error.js';
import { METADATA_KEY } from './safetensors-header.js';

/** A tensor a file will hold, declared before its values exist: name, dtype and shape. */
export interface SafetensorsEntrySpec {
  readonly name: string;
  readonly dtype: SafetensorsDtype;
  readonly shape: readonly number[];
}

/** Where one declared tensor's bytes go in the file. */
export interface SafetensorsSlot extends SafetensorsEntrySpec {
  /** Byte offset of its data from the start of the file. */
  readonly fileOffset: number;
  readonly byteLength: number;
}

/** The canonical layout of a safetensors file: its header bytes and every tensor's slot. */
export interface SafetensorsLayout {
  /** The 8-byte length and the padded header JSON: the file's first `dataStart` bytes. */
  readonly head: Uint8Array;
  readonly dataStart: number;
  /** The slots by name, in name (code point) order, contiguous from `dataStart`. */
  readonly slots: ReadonlyMap<string, SafetensorsSlot>;
  /** The size of the whole file in bytes. */
  readonly fileBytes: number;
}

/**
 * The one layout rule of this codec's writers: tensors in name (code point) order, their data
 * contiguous from offset 0 in that order; the header is canonical JSON (keys sorted by code point
 * at every depth, no whitespace), `__metadata__` included only when `metadata` has a key, padded
 * with spaces to a multiple of 8 bytes so every tensor starts 8-byte aligned.
 * @throws FMT_SAFETENSORS_INVALID empty-name, reserved-name, invalid-shape, metadata-not-strings,
 *   duplicate-key (a name declared twice), unsupported-dtype
 */
export function safetensorsLayout(
  entries: readonly SafetensorsEntrySpec[],
  metadata: Readonly<Record<string, string>> = {},
): SafetensorsLayout {
  if (!Object.values(metadata).every((v) => typeof v === 'string')) {
    throw safetensorsInvalid('metadata-not-strings', '__metadata__ values must be strings');
  }
  const sorted = [...entries].sort((a, b) => compareCodePoints(a.name, b.name));
  // Null prototype: a tensor named `__proto__` must become a key, not the object's prototype.
  const header = Object.create(null) as Record<string, unknown>;
  if (Object.keys(metadata).length > 0) header[METADATA_KEY] = metadata;
  const placed: { spec: SafetensorsEntrySpec; begin: number; bytes: number }[] = [];
  let offset = 0;
  for (const spec of sorted) {
    const { name, dtype, shape } = spec;
    const facts = { tensor: name };
    if (name === '') throw safetensorsInvalid('empty-name', 'a tensor has the empty name');
    if (name === METADATA_KEY) {
      throw safetensorsInvalid('reserved-name', 'a tensor cannot be named __metadata__', facts);
    }
    if (Object.hasOwn(header, name)) {
      throw safetensorsInvalid('duplicate-key', `tensor ${name} is declared twice`, facts);
    }
    if (!Object.hasOwn(SAFETENSORS_ITEM_BYTES, dtype)) {
      throw safetensorsInvalid('unsupported-dtype', `tensor ${name}: dtype ${String(dtype)}`, {
        ...facts,
        dtype: String(dtype),
      });
    }
    if (!shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      throw safetensorsInvalid('invalid-shape', `tensor ${name} has a malformed shape`, facts);
    }
    const bytes = elementCount(shape) * SAFETENSORS_ITEM_BYTES[dtype];
    header[name] = { dtype, shape: [...shape], data_offsets: [offset, offset + bytes] };
    placed.push({ spec, begin: offset, bytes });
    offset += bytes;
  }
  const json = new TextEncoder().encode(canonicalJson(header));
  const headerBytes = Math.ceil(json.length / 8) * 8;
  const head = new Uint8Array(8 + headerBytes);
  new DataView(head.buffer).setBigUint64(0, BigInt(headerBytes), true);
  head.fill(0x20, 8);
  head.set(json, 8);
  const dataStart = head.length;
  const slots = new Map<string, SafetensorsSlot>();
  for (const { spec, begin, bytes } of placed) {
    slots.set(spec.name, {
      name: spec.name,
      dtype: spec.dtype,
      shape: [...spec.shape],
      fileOffset: dataStart + begin,
      byteLength: bytes,
    });
  }
  return { head, dataStart, slots, fileBytes: dataStart + offset };
}
