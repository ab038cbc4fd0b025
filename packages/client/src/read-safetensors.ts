import { FlowfleetError } from '@flowfleet/errors';

/** The element types the client reads. */
export type SafetensorsDtype = 'F32' | 'F64' | 'I32' | 'I64';

/** The typed array of each element type. */
export interface SafetensorsArrays {
  readonly F32: Float32Array;
  readonly F64: Float64Array;
  readonly I32: Int32Array;
  readonly I64: BigInt64Array;
}

/** One tensor: its element type, shape (row-major) and values. */
export interface SafetensorsTensor<D extends SafetensorsDtype = SafetensorsDtype> {
  readonly dtype: D;
  readonly shape: readonly number[];
  readonly data: SafetensorsArrays[D];
}

/** A parsed safetensors file: tensors by name and the `__metadata__` strings. */
export interface SafetensorsFile {
  readonly tensors: Readonly<Record<string, SafetensorsTensor>>;
  readonly metadata: Readonly<Record<string, string>>;
}

const ITEM_BYTES: Readonly<Record<SafetensorsDtype, number>> = { F32: 4, F64: 8, I32: 4, I64: 8 };
/** Headers larger than this are refused before decoding (the format's reference limit). */
const MAX_HEADER_BYTES = 100 * 1024 * 1024;
const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function invalid(message: string, details: Record<string, unknown> = {}): FlowfleetError {
  return new FlowfleetError('CLIENT_RESULT_INVALID', `invalid safetensors: ${message}`, {
    details,
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isDtype(value: unknown): value is SafetensorsDtype {
  return typeof value === 'string' && Object.hasOwn(ITEM_BYTES, value);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** Copies the bytes out (aligned, so a typed array can view them) and decodes little-endian. */
function decode(bytes: Uint8Array, dtype: SafetensorsDtype, count: number) {
  if (LITTLE_ENDIAN_HOST) {
    // A copy into a fresh buffer (a Buffer's own slice() is a view into a shared pool).
    const buffer = new Uint8Array(bytes).buffer;
    switch (dtype) {
      case 'F32':
        return new Float32Array(buffer, 0, count);
      case 'F64':
        return new Float64Array(buffer, 0, count);
      case 'I32':
        return new Int32Array(buffer, 0, count);
      case 'I64':
        return new BigInt64Array(buffer, 0, count);
    }
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (dtype) {
    case 'F32':
      return Float32Array.from({ length: count }, (_, i) => view.getFloat32(4 * i, true));
    case 'F64':
      return Float64Array.from({ length: count }, (_, i) => view.getFloat64(8 * i, true));
    case 'I32':
      return Int32Array.from({ length: count }, (_, i) => view.getInt32(4 * i, true));
    case 'I64':
      return BigInt64Array.from({ length: count }, (_, i) => view.getBigInt64(8 * i, true));
  }
}

function readMetadata(value: unknown): Record<string, string> {
  if (value === undefined) return {};
  if (!isRecord(value) || !Object.values(value).every((v) => typeof v === 'string')) {
    throw invalid('__metadata__ is not an object of strings');
  }
  return { ...(value as Record<string, string>) };
}

function readTensor(
  name: string,
  entry: unknown,
  data: Uint8Array,
): { tensor: SafetensorsTensor; begin: number; end: number } {
  if (!isRecord(entry)) throw invalid(`tensor ${name} is not an object`, { tensor: name });
  const { dtype, shape, data_offsets: offsets } = entry;
  if (!isDtype(dtype)) {
    throw invalid(
      `tensor ${name} has dtype ${String(dtype)}; the client reads F32, F64, I32, I64`,
      {
        tensor: name,
        dtype: String(dtype),
      },
    );
  }
  if (!Array.isArray(shape) || !shape.every(isCount)) {
    throw invalid(`tensor ${name} has a malformed shape`, { tensor: name });
  }
  const count = (shape as number[]).reduce((a, b) => a * b, 1);
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isCount)) {
    throw invalid(`tensor ${name} has malformed data_offsets`, { tensor: name });
  }
  const [begin, end] = offsets as [number, number];
  if (end - begin !== count * ITEM_BYTES[dtype]) {
    throw invalid(
      `tensor ${name} spans ${end - begin} bytes, but ${dtype} [${shape.join(', ')}] needs ${count * ITEM_BYTES[dtype]}`,
      { tensor: name },
    );
  }
  if (end > data.length) {
    throw invalid(`tensor ${name} runs past the end of the file`, { tensor: name });
  }
  const tensor = {
    dtype,
    shape: [...(shape as number[])],
    data: decode(data.subarray(begin, end), dtype, count),
  };
  return { tensor: tensor as SafetensorsTensor, begin, end };
}

/**
 * Reads a safetensors file: an 8-byte little-endian header length, a JSON header of
 * `{name: {dtype, shape, data_offsets}}` plus optional `__metadata__` strings, then the data.
 * F32, F64, I32 and I64 tensors become Float32Array, Float64Array, Int32Array and BigInt64Array
 * (copies, so they stay valid and aligned whatever happens to `bytes`). Overlapping tensors are
 * refused.
 * @throws FlowfleetError CLIENT_RESULT_INVALID naming what is wrong
 */
export function readSafetensors(bytes: Uint8Array): SafetensorsFile {
  if (bytes.length < 8) throw invalid('shorter than the 8-byte header length');
  const headerLength = new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true);
  if (headerLength > BigInt(Math.min(MAX_HEADER_BYTES, bytes.length - 8))) {
    throw invalid(`header length ${headerLength} runs past the end or the limit`, {
      headerLength: Number(headerLength),
    });
  }
  const dataStart = 8 + Number(headerLength);
  let header: unknown;
  try {
    header = JSON.parse(
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, dataStart)),
    );
  } catch (cause) {
    throw new FlowfleetError(
      'CLIENT_RESULT_INVALID',
      'invalid safetensors: the header is not JSON',
      {
        details: {},
        cause,
      },
    );
  }
  if (!isRecord(header)) throw invalid('the header is not a JSON object');
  const data = bytes.subarray(dataStart);
  const tensors: Record<string, SafetensorsTensor> = {};
  const spans: { name: string; begin: number; end: number }[] = [];
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const { tensor, begin, end } = readTensor(name, entry, data);
    tensors[name] = tensor;
    if (end > begin) spans.push({ name, begin, end });
  }
  spans.sort((a, b) => a.begin - b.begin);
  for (let i = 1; i < spans.length; i++) {
    const before = spans[i - 1];
    const span = spans[i];
    if (before !== undefined && span !== undefined && span.begin < before.end) {
      throw invalid(`tensors ${before.name} and ${span.name} overlap`, {
        tensors: [before.name, span.name],
      });
    }
  }
  return { tensors, metadata: readMetadata(header['__metadata__']) };
}
