import { FlowfleetError } from '@flowfleet/errors';
import {
  readSafetensors,
  writeSafetensors,
  type SafetensorsContents,
  type SafetensorsTensor,
} from '@flowfleet/models';
import type { RolloutResult } from './rollout-result.js';

/** `__metadata__.format` of a rollout file. */
export const ROLLOUT_FORMAT = 'flowfleet.rollout';
/** `__metadata__.format_version` this code writes and reads. */
export const ROLLOUT_FORMAT_VERSION = '1';

/** Metadata fields of the JSON in `__metadata__.rollout` (everything but the tensors). */
type RolloutMetadata = Omit<
  RolloutResult,
  'latents' | 'logProbs' | 'sigmas' | 'timesteps' | 'stepIndices' | 'seeds'
>;

/** The safetensors dtype each `SafetensorsTensor` dtype is stored as. */
const STORED: Readonly<Record<SafetensorsTensor['dtype'], string>> = {
  float32: 'F32',
  float64: 'F64',
  int32: 'I32',
  int64: 'I64',
};

function tensorsOf(result: RolloutResult): Record<string, SafetensorsTensor> {
  const { steps: t, group: g, latentDims } = result;
  return {
    latents: { dtype: 'float32', dims: [t + 1, g, ...latentDims], data: result.latents },
    log_probs: { dtype: 'float64', dims: [t, g], data: result.logProbs },
    seeds: { dtype: 'int64', dims: [g], data: BigInt64Array.from(result.seeds, (s) => BigInt(s)) },
    sigmas: { dtype: 'float64', dims: [t + 1], data: result.sigmas },
    step_indices: { dtype: 'int32', dims: [t], data: result.stepIndices },
    timesteps: { dtype: 'float64', dims: [t], data: result.timesteps },
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

function invalid(
  message: string,
  details: Record<string, unknown> = {},
  cause?: unknown,
): FlowfleetError {
  return new FlowfleetError('RT_RESULT_INVALID', `invalid rollout file: ${message}`, {
    details,
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * Serialises a rollout result as one safetensors file (the models package's codec): tensors
 * `latents` F32 [T+1, G, C, F, H, W], `log_probs` F64 [T, G], `seeds` I64 [G], `sigmas` F64
 * [T+1], `step_indices` I32 [T], `timesteps` F64 [T] (name-sorted, little-endian, 8-byte
 * aligned); `__metadata__` holds `format`, `format_version` and `rollout` (JSON of every other
 * field).
 * @throws FlowfleetError RT_RESULT_INVALID when an array's length does not match its shape
 */
export function writeRolloutResult(result: RolloutResult): Uint8Array {
  const tensors = tensorsOf(result);
  for (const [name, tensor] of Object.entries(tensors)) {
    const count = tensor.dims.reduce((a, b) => a * b, 1);
    if (count !== tensor.data.length) {
      throw invalid(
        `tensor ${name} holds ${tensor.data.length} values for shape [${tensor.dims.join(', ')}]`,
        { tensor: name },
      );
    }
  }
  return writeSafetensors(tensors, {
    format: ROLLOUT_FORMAT,
    format_version: ROLLOUT_FORMAT_VERSION,
    rollout: JSON.stringify(metadataOf(result)),
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseMetadata(meta: Readonly<Record<string, string>>): RolloutMetadata {
  if (meta['format'] !== ROLLOUT_FORMAT) {
    throw invalid(`format is ${String(meta['format'])}`, { format: meta['format'] });
  }
  if (meta['format_version'] !== ROLLOUT_FORMAT_VERSION) {
    throw invalid(`unsupported format_version ${String(meta['format_version'])}`, {
      version: meta['format_version'],
    });
  }
  const text = meta['rollout'];
  if (text === undefined) throw invalid('__metadata__.rollout is not a string');
  let rollout: unknown;
  try {
    rollout = JSON.parse(text);
  } catch (cause) {
    throw invalid('__metadata__.rollout is not JSON', { part: '__metadata__.rollout' }, cause);
  }
  if (!isRecord(rollout)) throw invalid('__metadata__.rollout is not an object');
  const { steps, group, latentDims } = rollout;
  const isCount = (v: unknown): v is number =>
    typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  if (!isCount(steps) || !isCount(group) || group < 1) {
    throw invalid('steps or group is not a count');
  }
  if (!Array.isArray(latentDims) || latentDims.length !== 4 || !latentDims.every(isCount)) {
    throw invalid('latentDims is not four counts');
  }
  return rollout as unknown as RolloutMetadata;
}

/** The named tensor after checking its stored dtype and shape against what the metadata implies. */
function tensorOf(
  file: SafetensorsContents<SafetensorsTensor>,
  name: string,
  expected: SafetensorsTensor,
): SafetensorsTensor['data'] {
  const tensor = file.tensors.get(name);
  if (tensor === undefined) throw invalid(`missing tensor ${name}`, { tensor: name });
  const stored = file.storedDtypes.get(name);
  // The stored dtype, not the decoded one: F16 also decodes to float32.
  if (stored !== STORED[expected.dtype]) {
    throw invalid(`tensor ${name} is ${String(stored)}, expected ${STORED[expected.dtype]}`, {
      tensor: name,
    });
  }
  const { dims } = tensor;
  if (dims.length !== expected.dims.length || dims.some((d, i) => d !== expected.dims[i])) {
    throw invalid(
      `tensor ${name} has shape ${JSON.stringify(dims)}, expected [${expected.dims.join(', ')}]`,
      { tensor: name },
    );
  }
  return tensor.data;
}

/**
 * Reads a rollout file written by `writeRolloutResult` (the trainer side): the models codec
 * checks the safetensors layout, then the format, every tensor's dtype and shape (against the
 * metadata) are checked here, and the result is returned.
 * @throws FlowfleetError RT_RESULT_INVALID naming what is wrong (a layout error as its cause)
 */
export function readRolloutResult(bytes: Uint8Array): RolloutResult {
  let file: SafetensorsContents<SafetensorsTensor>;
  try {
    file = readSafetensors(bytes, { keepFloat64: true });
  } catch (cause) {
    const reason = (cause as { details?: { reason?: unknown } }).details?.reason;
    throw invalid(typeof reason === 'string' ? reason : 'not a safetensors file', {}, cause);
  }
  const meta = parseMetadata(file.metadata);
  const expected = tensorsOf({
    ...(meta as RolloutResult),
    latents: new Float32Array(0),
    logProbs: new Float64Array(0),
    sigmas: new Float64Array(0),
    timesteps: new Float64Array(0),
    stepIndices: new Int32Array(0),
    seeds: [],
  });
  const extra = [...file.tensors.keys()].filter((k) => !(k in expected));
  if (extra.length > 0) throw invalid(`unexpected tensors ${extra.join(', ')}`, { tensors: extra });
  const read = (name: string) => tensorOf(file, name, expected[name]!);
  return {
    ...meta,
    latents: read('latents') as Float32Array,
    logProbs: read('log_probs') as Float64Array,
    sigmas: read('sigmas') as Float64Array,
    timesteps: read('timesteps') as Float64Array,
    stepIndices: read('step_indices') as Int32Array,
    seeds: Array.from(read('seeds') as BigInt64Array, (s) => Number(s)),
  };
}
