import { FlowfleetError } from '@flowfleet/errors';
import type { SafetensorsTensor } from './read-safetensors.js';

const STORED_DTYPE = { float32: 'F32', float64: 'F64', int32: 'I32', int64: 'I64' } as const;

/** Tensors to write: a map or a plain record, written in name-sorted order. */
export type TensorCollection =
  ReadonlyMap<string, SafetensorsTensor> | Readonly<Record<string, SafetensorsTensor>>;

function entriesOf(tensors: TensorCollection): [string, SafetensorsTensor][] {
  const entries = tensors instanceof Map ? [...tensors.entries()] : Object.entries(tensors);
  return entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function checkTensor(name: string, tensor: SafetensorsTensor): void {
  let count = 1;
  for (const d of tensor.dims) {
    if (!Number.isSafeInteger(d) || d < 0) {
      throw new FlowfleetError('MODEL_SAFETENSORS_INVALID', `tensor ${name} has an invalid dim`, {
        details: { reason: 'invalid dim', tensor: name, dims: [...tensor.dims] },
      });
    }
    count *= d;
  }
  if (count !== tensor.data.length || name === '__metadata__') {
    throw new FlowfleetError('MODEL_SAFETENSORS_INVALID', `tensor ${name} cannot be written`, {
      details: {
        reason: 'dims do not match data length',
        tensor: name,
        length: tensor.data.length,
      },
    });
  }
}

/**
 * Serialises tensors as safetensors (F32 / F64 / I32 / I64, little-endian), name-sorted, with the
 * header padded with spaces to a multiple of 8 bytes so every tensor stays 8-byte aligned.
 * @throws MODEL_SAFETENSORS_INVALID when dims do not match a tensor's data length.
 */
export function writeSafetensors(
  tensors: TensorCollection,
  metadata?: Readonly<Record<string, string>>,
): Uint8Array {
  const entries = entriesOf(tensors);
  const header: Record<string, unknown> = {};
  if (metadata !== undefined) header['__metadata__'] = { ...metadata };
  let offset = 0;
  for (const [name, tensor] of entries) {
    checkTensor(name, tensor);
    const size = tensor.data.byteLength;
    header[name] = {
      dtype: STORED_DTYPE[tensor.dtype],
      shape: [...tensor.dims],
      data_offsets: [offset, offset + size],
    };
    offset += size;
  }
  let json = new TextEncoder().encode(JSON.stringify(header));
  const padded = Math.ceil(json.length / 8) * 8;
  if (padded !== json.length) {
    const withPad = new Uint8Array(padded).fill(0x20);
    withPad.set(json);
    json = withPad;
  }
  const out = new Uint8Array(8 + json.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  let cursor = 8 + json.length;
  const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
  for (const [, tensor] of entries) {
    const { data } = tensor;
    const raw = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    out.set(raw, cursor);
    if (!littleEndian)
      swapInPlace(out.subarray(cursor, cursor + raw.length), data.BYTES_PER_ELEMENT);
    cursor += raw.length;
  }
  return out;
}

function swapInPlace(bytes: Uint8Array, itemBytes: number): void {
  for (let i = 0; i < bytes.length; i += itemBytes) bytes.subarray(i, i + itemBytes).reverse();
}
