import { FlowfleetError } from '@flowfleet/errors';
import type { SafetensorsDtype, SafetensorsTensor } from './read-safetensors.js';

const ITEM_BYTES: Readonly<Record<SafetensorsDtype, number>> = { F32: 4, F64: 8, I32: 4, I64: 8 };
const ARRAY_OF: Readonly<Record<SafetensorsDtype, new (n: number) => ArrayBufferView>> = {
  F32: Float32Array,
  F64: Float64Array,
  I32: Int32Array,
  I64: BigInt64Array,
};

function invalid(message: string, tensor: string): FlowfleetError {
  return new FlowfleetError('CLIENT_INVALID_OPTIONS', `cannot write tensor ${tensor}: ${message}`, {
    details: { option: 'tensors', tensor },
  });
}

/**
 * Writes tensors as one safetensors file (e.g. a weights blob to upload): tensors in name order,
 * little-endian, the JSON header padded with spaces to a multiple of 8 bytes; `metadata` goes
 * in `__metadata__`.
 * @throws FlowfleetError CLIENT_INVALID_OPTIONS when a tensor's array type or length does not
 *   match its dtype and shape
 */
export function writeSafetensors(
  tensors: Readonly<Record<string, SafetensorsTensor>>,
  metadata: Readonly<Record<string, string>> = {},
): Uint8Array {
  const names = Object.keys(tensors).sort();
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) header['__metadata__'] = { ...metadata };
  let offset = 0;
  for (const name of names) {
    const tensor = tensors[name] as SafetensorsTensor;
    if (name === '__metadata__') throw invalid('the name is reserved', name);
    if (!(tensor.data instanceof ARRAY_OF[tensor.dtype])) {
      throw invalid(`${tensor.dtype} needs a ${ARRAY_OF[tensor.dtype].name}`, name);
    }
    const count = tensor.shape.reduce((a, b) => a * b, 1);
    if (!tensor.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      throw invalid(`shape [${tensor.shape.join(', ')}] is not a list of counts`, name);
    }
    if (count !== tensor.data.length) {
      throw invalid(`${tensor.data.length} values for shape [${tensor.shape.join(', ')}]`, name);
    }
    const sizeBytes = count * ITEM_BYTES[tensor.dtype];
    header[name] = {
      dtype: tensor.dtype,
      shape: [...tensor.shape],
      data_offsets: [offset, offset + sizeBytes],
    };
    offset += sizeBytes;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const headerBytes = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + headerBytes + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(headerBytes), true);
  out.fill(0x20, 8, 8 + headerBytes);
  out.set(json, 8);
  let at = 8 + headerBytes;
  for (const name of names) {
    const { dtype, data } = tensors[name] as SafetensorsTensor;
    for (let i = 0; i < data.length; i++) {
      if (dtype === 'F32') view.setFloat32(at, data[i] as number, true);
      else if (dtype === 'F64') view.setFloat64(at, data[i] as number, true);
      else if (dtype === 'I32') view.setInt32(at, data[i] as number, true);
      else view.setBigInt64(at, data[i] as bigint, true);
      at += ITEM_BYTES[dtype];
    }
  }
  return out;
}
