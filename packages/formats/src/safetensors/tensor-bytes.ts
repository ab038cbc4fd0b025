import {
  SAFETENSORS_ARRAY_OF,
  SAFETENSORS_ITEM_BYTES,
  type SafetensorsDtype,
  type SafetensorsTensor,
} from './dtypes.js';
import { safetensorsInvalid } from './safetensors-error.js';

/** Whether this host stores typed arrays little-endian, as safetensors does (every Node target). */
export const HOST_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function swapInPlace(bytes: Uint8Array, itemBytes: number): void {
  if (itemBytes === 1) return;
  for (let i = 0; i < bytes.length; i += itemBytes) bytes.subarray(i, i + itemBytes).reverse();
}

/** The index of the first byte that is neither 0 nor 1, or -1. */
function firstNonBool(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; i++) if (bytes[i]! > 1) return i;
  return -1;
}

/**
 * A tensor over `raw` (its little-endian bytes). Without `copy`, the typed array is a *view* of
 * `raw`'s buffer when the host is little-endian and `raw` is aligned to the item size, so a
 * decoded blob is not held twice; otherwise it owns an aligned copy (byte-swapped on a
 * big-endian host).
 * @throws FMT_SAFETENSORS_INVALID invalid-bool when a BOOL byte is not 0 or 1
 */
export function tensorFromBytes(
  name: string,
  dtype: SafetensorsDtype,
  shape: readonly number[],
  raw: Uint8Array,
  copy: boolean,
): SafetensorsTensor {
  if (dtype === 'BOOL') {
    const at = firstNonBool(raw);
    if (at >= 0) {
      throw safetensorsInvalid('invalid-bool', `BOOL tensor ${name} holds byte ${raw[at]}`, {
        tensor: name,
        index: at,
      });
    }
  }
  const itemBytes = SAFETENSORS_ITEM_BYTES[dtype];
  const count = raw.length / itemBytes;
  const ArrayOf = SAFETENSORS_ARRAY_OF[dtype];
  let bytes = raw;
  if (copy || !HOST_LITTLE_ENDIAN || raw.byteOffset % itemBytes !== 0) {
    bytes = new Uint8Array(raw.length);
    bytes.set(raw);
    if (!HOST_LITTLE_ENDIAN) swapInPlace(bytes, itemBytes);
  }
  const data = new ArrayOf(bytes.buffer as ArrayBuffer, bytes.byteOffset, count);
  return { dtype, shape: [...shape], data } as SafetensorsTensor;
}

/**
 * The little-endian bytes of a tensor's values: a view of its array on a little-endian host.
 * @throws FMT_SAFETENSORS_INVALID reserved-name, empty-name, wrong-array, invalid-shape,
 *   size-mismatch, invalid-bool when the tensor cannot be written as it claims
 */
export function bytesOfTensor(name: string, tensor: SafetensorsTensor): Uint8Array {
  const facts = { tensor: name };
  if (name === '') throw safetensorsInvalid('empty-name', 'a tensor has the empty name');
  if (name === '__metadata__') {
    throw safetensorsInvalid('reserved-name', 'a tensor cannot be named __metadata__', facts);
  }
  const { dtype, shape, data } = tensor;
  if (
    !Object.hasOwn(SAFETENSORS_ARRAY_OF, dtype) ||
    !(data instanceof SAFETENSORS_ARRAY_OF[dtype])
  ) {
    throw safetensorsInvalid(
      'wrong-array',
      `tensor ${name}: ${String(dtype)} needs its typed array`,
      {
        ...facts,
        dtype: String(dtype),
      },
    );
  }
  if (!shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    throw safetensorsInvalid('invalid-shape', `tensor ${name} has a malformed shape`, facts);
  }
  const count = shape.reduce((a, b) => a * b, 1);
  if (count !== data.length) {
    throw safetensorsInvalid(
      'size-mismatch',
      `tensor ${name}: ${data.length} values for shape [${shape.join(', ')}]`,
      { ...facts, values: data.length, expected: count },
    );
  }
  const view = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (dtype === 'BOOL' && firstNonBool(view) >= 0) {
    throw safetensorsInvalid(
      'invalid-bool',
      `BOOL tensor ${name} holds a byte other than 0/1`,
      facts,
    );
  }
  if (HOST_LITTLE_ENDIAN) return view;
  const swapped = new Uint8Array(view);
  swapInPlace(swapped, SAFETENSORS_ITEM_BYTES[dtype]);
  return swapped;
}
