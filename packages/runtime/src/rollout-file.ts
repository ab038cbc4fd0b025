import { FlowfleetError } from '@flowfleet/errors';
import type { RolloutResult } from './rollout-result.js';

/** `__metadata__.format` of a rollout file. */
export const ROLLOUT_FORMAT = 'flowfleet.rollout';
/** `__metadata__.format_version` this code writes and reads. */
export const ROLLOUT_FORMAT_VERSION = '1';

type StoredDtype = 'F32' | 'F64' | 'I32' | 'I64';
type Stored = Float32Array | Float64Array | Int32Array | BigInt64Array;

interface TensorSpec {
  readonly dtype: StoredDtype;
  readonly shape: readonly number[];
  readonly data: Stored;
}

const ITEM_BYTES: Record<StoredDtype, number> = { F32: 4, F64: 8, I32: 4, I64: 8 };

/** Metadata fields of the JSON in `__metadata__.rollout` (everything but the tensors). */
type RolloutMetadata = Omit<
  RolloutResult,
  'latents' | 'logProbs' | 'sigmas' | 'timesteps' | 'stepIndices' | 'seeds'
>;

function tensorsOf(result: RolloutResult): Record<string, TensorSpec> {
  const { steps: t, group: g, latentDims } = result;
  return {
    latents: { dtype: 'F32', shape: [t + 1, g, ...latentDims], data: result.latents },
    log_probs: { dtype: 'F64', shape: [t, g], data: result.logProbs },
    seeds: { dtype: 'I64', shape: [g], data: BigInt64Array.from(result.seeds, (s) => BigInt(s)) },
    sigmas: { dtype: 'F64', shape: [t + 1], data: result.sigmas },
    step_indices: { dtype: 'I32', shape: [t], data: result.stepIndices },
    timesteps: { dtype: 'F64', shape: [t], data: result.timesteps },
  };
}

const TENSOR_FIELDS = new Set([
  'latents',
  'logProbs',
  'sigmas',
  'timesteps',
  'stepIndices',
  'seeds',
]);

function metadataOf(result: RolloutResult): RolloutMetadata {
  const entries = Object.entries(result).filter(([key]) => !TENSOR_FIELDS.has(key));
  return Object.fromEntries(entries) as unknown as RolloutMetadata;
}

/**
 * Serialises a rollout result as one safetensors file: tensors `latents` F32 [T+1, G, C, F, H, W],
 * `log_probs` F64 [T, G], `seeds` I64 [G], `sigmas` F64 [T+1], `step_indices` I32 [T],
 * `timesteps` F64 [T] (name-sorted, little-endian, 8-byte aligned); `__metadata__` holds
 * `format`, `format_version` and `rollout` (JSON of every other field).
 * @throws FlowfleetError RT_RESULT_INVALID when an array's length does not match its shape
 */
export function writeRolloutResult(result: RolloutResult): Uint8Array {
  const tensors = tensorsOf(result);
  const header: Record<string, unknown> = {
    __metadata__: {
      format: ROLLOUT_FORMAT,
      format_version: ROLLOUT_FORMAT_VERSION,
      rollout: JSON.stringify(metadataOf(result)),
    },
  };
  let offset = 0;
  for (const [name, spec] of Object.entries(tensors)) {
    const count = spec.shape.reduce((a, b) => a * b, 1);
    if (count !== spec.data.length) {
      throw invalid(
        `tensor ${name} holds ${spec.data.length} values for shape [${spec.shape.join(', ')}]`,
        {
          tensor: name,
        },
      );
    }
    const bytes = count * ITEM_BYTES[spec.dtype];
    header[name] = {
      dtype: spec.dtype,
      shape: [...spec.shape],
      data_offsets: [offset, offset + bytes],
    };
    offset += bytes;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const headerBytes = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + headerBytes + offset);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(headerBytes), true);
  out.fill(0x20, 8, 8 + headerBytes);
  out.set(json, 8);
  let cursor = 8 + headerBytes;
  for (const spec of Object.values(tensors)) {
    cursor = writeLittleEndian(view, cursor, spec);
  }
  return out;
}

function writeLittleEndian(view: DataView, start: number, spec: TensorSpec): number {
  let at = start;
  const { data } = spec;
  for (let i = 0; i < data.length; i++) {
    switch (spec.dtype) {
      case 'F32':
        view.setFloat32(at, data[i] as number, true);
        break;
      case 'F64':
        view.setFloat64(at, data[i] as number, true);
        break;
      case 'I32':
        view.setInt32(at, data[i] as number, true);
        break;
      case 'I64':
        view.setBigInt64(at, data[i] as bigint, true);
        break;
    }
    at += ITEM_BYTES[spec.dtype];
  }
  return at;
}

function invalid(message: string, details: Record<string, unknown> = {}): FlowfleetError {
  return new FlowfleetError('RT_RESULT_INVALID', `invalid rollout file: ${message}`, { details });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw new FlowfleetError('RT_RESULT_INVALID', `invalid rollout file: ${what} is not JSON`, {
      details: { part: what },
      cause,
    });
  }
}

function readTensor(
  bytes: Uint8Array,
  dataStart: number,
  name: string,
  entry: unknown,
  expected: TensorSpec,
): Stored {
  if (!isRecord(entry)) throw invalid(`missing tensor ${name}`, { tensor: name });
  const { dtype, shape, data_offsets: offsets } = entry;
  if (dtype !== expected.dtype)
    throw invalid(`tensor ${name} is ${String(dtype)}, expected ${expected.dtype}`, {
      tensor: name,
    });
  if (
    !Array.isArray(shape) ||
    shape.length !== expected.shape.length ||
    shape.some((d, i) => d !== expected.shape[i])
  ) {
    throw invalid(
      `tensor ${name} has shape ${JSON.stringify(shape)}, expected [${expected.shape.join(', ')}]`,
      { tensor: name },
    );
  }
  const count = expected.shape.reduce((a, b) => a * b, 1);
  const size = count * ITEM_BYTES[expected.dtype];
  if (
    !Array.isArray(offsets) ||
    offsets.length !== 2 ||
    typeof offsets[0] !== 'number' ||
    offsets[1] !== offsets[0] + size
  ) {
    throw invalid(`tensor ${name} has bad data_offsets`, { tensor: name });
  }
  const begin = dataStart + (offsets[0] as number);
  if (!Number.isSafeInteger(begin) || begin < dataStart || begin + size > bytes.length) {
    throw invalid(`tensor ${name} runs past the end of the file`, { tensor: name });
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset + begin, size);
  switch (expected.dtype) {
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

function parseMetadata(header: Record<string, unknown>): RolloutMetadata {
  const meta = header['__metadata__'];
  if (!isRecord(meta)) throw invalid('no __metadata__');
  if (meta['format'] !== ROLLOUT_FORMAT)
    throw invalid(`format is ${String(meta['format'])}`, { format: meta['format'] });
  if (meta['format_version'] !== ROLLOUT_FORMAT_VERSION) {
    throw invalid(`unsupported format_version ${String(meta['format_version'])}`, {
      version: meta['format_version'],
    });
  }
  if (typeof meta['rollout'] !== 'string') throw invalid('__metadata__.rollout is not a string');
  const rollout = parseJson(meta['rollout'], '__metadata__.rollout');
  if (!isRecord(rollout)) throw invalid('__metadata__.rollout is not an object');
  const { steps, group, latentDims } = rollout;
  const isCount = (v: unknown): v is number =>
    typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  if (!isCount(steps) || !isCount(group) || group < 1)
    throw invalid('steps or group is not a count');
  if (!Array.isArray(latentDims) || latentDims.length !== 4 || !latentDims.every(isCount)) {
    throw invalid('latentDims is not four counts');
  }
  return rollout as unknown as RolloutMetadata;
}

/**
 * Reads a rollout file written by `writeRolloutResult` (the trainer side): checks the format,
 * every tensor's dtype, shape (against the metadata) and bounds, and returns the result.
 * @throws FlowfleetError RT_RESULT_INVALID naming what is wrong
 */
export function readRolloutResult(bytes: Uint8Array): RolloutResult {
  if (bytes.length < 8) throw invalid('shorter than the 8-byte header length');
  const headerBytes = new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true);
  if (headerBytes > BigInt(bytes.length - 8)) throw invalid('header length runs past the end');
  const dataStart = 8 + Number(headerBytes);
  const header = parseJson(new TextDecoder().decode(bytes.subarray(8, dataStart)), 'header');
  if (!isRecord(header)) throw invalid('header is not an object');
  const meta = parseMetadata(header);
  const shapes = tensorsOf({
    ...(meta as RolloutResult),
    latents: new Float32Array(0),
    logProbs: new Float64Array(0),
    sigmas: new Float64Array(0),
    timesteps: new Float64Array(0),
    stepIndices: new Int32Array(0),
    seeds: [],
  });
  const extra = Object.keys(header).filter((k) => k !== '__metadata__' && !(k in shapes));
  if (extra.length > 0) throw invalid(`unexpected tensors ${extra.join(', ')}`, { tensors: extra });
  const read = (name: string): Stored =>
    readTensor(bytes, dataStart, name, header[name], shapes[name]!);
  const seeds = Array.from(read('seeds') as BigInt64Array, (s) => Number(s));
  return {
    ...meta,
    latents: read('latents') as Float32Array,
    logProbs: read('log_probs') as Float64Array,
    sigmas: read('sigmas') as Float64Array,
    timesteps: read('timesteps') as Float64Array,
    stepIndices: read('step_indices') as Int32Array,
    seeds,
  };
}
