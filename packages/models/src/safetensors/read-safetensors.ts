import { FlowfleetError } from '@flowfleet/errors';
import type { TensorData } from '@flowfleet/platform';
import { decodeBfloat16, decodeFloat16 } from './half-float.js';

/** Safetensors dtypes this reader decodes, with their item sizes in bytes. */
export const SAFETENSORS_ITEM_BYTES = {
  F32: 4,
  F16: 2,
  BF16: 2,
  F64: 8,
  I32: 4,
  I64: 8,
} as const;

/** A dtype name of the safetensors format this reader decodes. */
export type SafetensorsDtype = keyof typeof SAFETENSORS_ITEM_BYTES;

/** Upper bound of the JSON header, as in the reference implementation (100 MB). */
export const MAX_HEADER_BYTES = 100_000_000;

/** A float64 tensor: what `F64` decodes to when asked to keep it (`keepFloat64`). */
export interface Float64Tensor {
  readonly dtype: 'float64';
  readonly dims: readonly number[];
  readonly data: Float64Array;
}

/** Any tensor the safetensors codec reads or writes: a component tensor, or float64. */
export type SafetensorsTensor = TensorData | Float64Tensor;

/** Options of `readSafetensors`. */
export interface ReadSafetensorsOptions {
  /**
   * Decode `F64` as float64 (Float64Array) instead of rounding it to float32. Default false:
   * weights are float32 everywhere (`checkWeightsAgainstConfig` expects it).
   */
  readonly keepFloat64?: boolean;
}

/**
 * A decoded safetensors file: F32/F16/BF16 become float32, F64 float32 (or float64 with
 * `keepFloat64`), I32 int32, I64 int64.
 */
export interface SafetensorsContents<T extends SafetensorsTensor = TensorData> {
  readonly tensors: Map<string, T>;
  /** The `__metadata__` string map (empty when absent). */
  readonly metadata: Record<string, string>;
  /** Each tensor's dtype as stored in the file. */
  readonly storedDtypes: Map<string, SafetensorsDtype>;
}

interface Entry {
  readonly name: string;
  readonly dtype: SafetensorsDtype;
  readonly shape: number[];
  readonly begin: number;
  readonly end: number;
}

function invalid(reason: string, details: Record<string, unknown> = {}): FlowfleetError {
  return new FlowfleetError('MODEL_SAFETENSORS_INVALID', `invalid safetensors: ${reason}`, {
    details: { reason, ...details },
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isSafeCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function parseHeader(bytes: Uint8Array): { header: Record<string, unknown>; dataStart: number } {
  if (bytes.length < 8)
    throw invalid('shorter than the 8-byte header length', { bytes: bytes.length });
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerBytes = view.getBigUint64(0, true);
  if (headerBytes > BigInt(MAX_HEADER_BYTES)) {
    throw invalid('header length exceeds the 100 MB limit', { headerBytes: String(headerBytes) });
  }
  const n = Number(headerBytes);
  if (n < 2 || 8 + n > bytes.length) {
    throw invalid('header length out of bounds', { headerBytes: n, bytes: bytes.length });
  }
  let header: unknown;
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + n));
    header = JSON.parse(text);
  } catch (cause) {
    throw new FlowfleetError(
      'MODEL_SAFETENSORS_INVALID',
      'invalid safetensors: header is not UTF-8 JSON',
      {
        details: { reason: 'header is not UTF-8 JSON' },
        cause,
      },
    );
  }
  if (!isRecord(header)) throw invalid('header is not a JSON object');
  return { header, dataStart: 8 + n };
}

function parseMetadata(value: unknown): Record<string, string> {
  if (value === undefined) return {};
  if (!isRecord(value)) throw invalid('__metadata__ is not an object');
  const metadata: Record<string, string> = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== 'string') throw invalid('__metadata__ value is not a string', { key });
    metadata[key] = item;
  }
  return metadata;
}

function parseEntry(name: string, value: unknown): Entry {
  if (!isRecord(value)) throw invalid('tensor entry is not an object', { tensor: name });
  const { dtype, shape, data_offsets: offsets } = value;
  if (typeof dtype !== 'string' || !Object.hasOwn(SAFETENSORS_ITEM_BYTES, dtype)) {
    throw invalid('unknown or unsupported dtype', { tensor: name, dtype: String(dtype) });
  }
  if (!Array.isArray(shape) || !shape.every(isSafeCount)) {
    throw invalid('shape is not an array of non-negative integers', { tensor: name });
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isSafeCount)) {
    throw invalid('data_offsets is not two non-negative integers', { tensor: name });
  }
  const [begin, end] = offsets as [number, number];
  if (end < begin) throw invalid('data_offsets end before begin', { tensor: name, begin, end });
  const itemBytes = SAFETENSORS_ITEM_BYTES[dtype as SafetensorsDtype];
  let bytes = itemBytes;
  for (const d of shape as number[]) bytes *= d;
  if (!Number.isSafeInteger(bytes) || bytes !== end - begin) {
    throw invalid('shape × item size does not match the data_offsets span', {
      tensor: name,
      expectedBytes: bytes,
      spanBytes: end - begin,
    });
  }
  return { name, dtype: dtype as SafetensorsDtype, shape: shape as number[], begin, end };
}

const HOST_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function decode(entry: Entry, raw: Uint8Array, keepFloat64: boolean): SafetensorsTensor {
  const dims = entry.shape;
  switch (entry.dtype) {
    case 'F16':
      return { dtype: 'float32', dims, data: decodeFloat16(raw) };
    case 'BF16':
      return { dtype: 'float32', dims, data: decodeBfloat16(raw) };
    case 'F64': {
      if (keepFloat64) return decodeNative(entry, raw);
      const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
      const data = new Float32Array(raw.byteLength / 8);
      for (let i = 0; i < data.length; i++) data[i] = view.getFloat64(8 * i, true);
      return { dtype: 'float32', dims, data };
    }
    case 'F32':
    case 'I32':
    case 'I64':
      return decodeNative(entry, raw);
  }
}

function decodeNative(entry: Entry, raw: Uint8Array): SafetensorsTensor {
  const dims = entry.shape;
  // Copy into a fresh, aligned buffer the typed array owns (not raw.slice(): on a Node Buffer
  // that is a view of the shared pool).
  const copy = new Uint8Array(raw.byteLength);
  copy.set(raw);
  const buffer = copy.buffer;
  if (!HOST_LITTLE_ENDIAN) {
    const view = new DataView(buffer);
    const step = SAFETENSORS_ITEM_BYTES[entry.dtype];
    for (let i = 0; i < raw.byteLength; i += step) {
      if (step === 4) view.setUint32(i, view.getUint32(i, true));
      else view.setBigUint64(i, view.getBigUint64(i, true));
    }
  }
  if (entry.dtype === 'F32') return { dtype: 'float32', dims, data: new Float32Array(buffer) };
  if (entry.dtype === 'I32') return { dtype: 'int32', dims, data: new Int32Array(buffer) };
  if (entry.dtype === 'F64') return { dtype: 'float64', dims, data: new Float64Array(buffer) };
  return { dtype: 'int64', dims, data: new BigInt64Array(buffer) };
}

/**
 * Parses a safetensors buffer (8-byte LE header length, JSON header, LE data). The whole file is
 * validated before any tensor is decoded, so a bad file never yields a partial load: header
 * bounds, JSON, dtypes, shape × item size = span, offsets contiguous from 0, no overlap, no
 * trailing bytes. F64 is rounded to float32 unless `keepFloat64` is set.
 * @throws MODEL_SAFETENSORS_INVALID with `details.reason`.
 */
export function readSafetensors(bytes: Uint8Array): SafetensorsContents;
export function readSafetensors(
  bytes: Uint8Array,
  options: ReadSafetensorsOptions & { readonly keepFloat64: true },
): SafetensorsContents<SafetensorsTensor>;
export function readSafetensors(
  bytes: Uint8Array,
  options?: ReadSafetensorsOptions,
): SafetensorsContents<SafetensorsTensor>;
export function readSafetensors(
  bytes: Uint8Array,
  options: ReadSafetensorsOptions = {},
): SafetensorsContents<SafetensorsTensor> {
  const { header, dataStart } = parseHeader(bytes);
  const metadata = parseMetadata(header['__metadata__']);
  const entries = Object.entries(header)
    .filter(([name]) => name !== '__metadata__')
    .map(([name, value]) => parseEntry(name, value));
  const ordered = [...entries].sort((a, b) => a.begin - b.begin || a.end - b.end);
  const dataBytes = bytes.length - dataStart;
  let cursor = 0;
  for (const entry of ordered) {
    if (entry.begin !== cursor) {
      const reason = entry.begin < cursor ? 'tensor data overlaps' : 'gap between tensor data';
      throw invalid(reason, { tensor: entry.name, begin: entry.begin, expected: cursor });
    }
    cursor = entry.end;
  }
  if (cursor > dataBytes) {
    throw invalid('tensor data runs past the end of the file', { needed: cursor, dataBytes });
  }
  if (cursor < dataBytes) {
    throw invalid('trailing bytes after the last tensor', { used: cursor, dataBytes });
  }
  const tensors = new Map<string, SafetensorsTensor>();
  const storedDtypes = new Map<string, SafetensorsDtype>();
  const keepFloat64 = options.keepFloat64 === true;
  for (const entry of entries) {
    const raw = bytes.subarray(dataStart + entry.begin, dataStart + entry.end);
    tensors.set(entry.name, decode(entry, raw, keepFloat64));
    storedDtypes.set(entry.name, entry.dtype);
  }
  return { tensors, metadata, storedDtypes };
}
