import { duplicateJsonKey } from '../safetensors/duplicate-json-key.js';
import type { SafetensorsTensor } from '../safetensors/dtypes.js';
import { readSafetensors, type ReadSafetensorsOptions } from '../safetensors/read-safetensors.js';
import { parseRolloutMetadata } from './parse-rollout-metadata.js';
import { rolloutInvalid } from './rollout-error.js';
import { RolloutFile } from './rollout-file.js';
import {
  ROLLOUT_FORMAT,
  ROLLOUT_FORMAT_VERSIONS,
  type RolloutFormatVersion,
  type RolloutMetadata,
} from './rollout-metadata.js';
import {
  checkRolloutIndices,
  everyLatentStep,
  firstNonFinite,
  rolloutTensorLayout,
  type RolloutTensorSpec,
} from './rollout-record.js';

const METADATA_KEYS = ['format', 'format_version', 'rollout'];

function isKnownVersion(version: string | undefined): version is RolloutFormatVersion {
  return (ROLLOUT_FORMAT_VERSIONS as readonly (string | undefined)[]).includes(version);
}

/**
 * A rollout file's `__metadata__` strings as its record: format, version, exactly the three
 * keys, the record JSON (no repeated key) and that version's schema (§ 3, rules 18–22).
 * @throws FMT_ROLLOUT_INVALID not-rollout, unsupported-version, metadata-keys, rollout-not-json,
 *   rollout-schema
 */
export function parseMetadataStrings(metadata: Readonly<Record<string, string>>): RolloutMetadata {
  const { format, format_version: version, rollout } = metadata;
  if (format !== ROLLOUT_FORMAT) {
    throw rolloutInvalid(
      'not-rollout',
      `format is ${JSON.stringify(format)}, not ${ROLLOUT_FORMAT}`,
      { format: format ?? null },
    );
  }
  if (!isKnownVersion(version)) {
    throw rolloutInvalid(
      'unsupported-version',
      `format_version ${JSON.stringify(version)} is not one of ${ROLLOUT_FORMAT_VERSIONS.join(', ')}`,
      { version: version ?? null },
    );
  }
  const keys = Object.keys(metadata).sort();
  if (keys.join() !== METADATA_KEYS.join() || rollout === undefined) {
    throw rolloutInvalid('metadata-keys', `__metadata__ has keys ${keys.join(', ')}`, { keys });
  }
  let value: unknown;
  try {
    value = JSON.parse(rollout);
  } catch (cause) {
    throw rolloutInvalid('rollout-not-json', '__metadata__.rollout is not JSON', {}, cause);
  }
  const duplicate = duplicateJsonKey(rollout);
  if (duplicate !== undefined) {
    throw rolloutInvalid('rollout-not-json', `__metadata__.rollout repeats key ${duplicate}`, {
      key: duplicate,
    });
  }
  const parsed = parseRolloutMetadata(value, version);
  // A v1 record never carries v2's `video` as meaning: the version is the file's, not the key's.
  if (version === '1' && Object.hasOwn(parsed, 'video')) {
    throw rolloutInvalid('rollout-schema', '__metadata__.rollout video: is a v2 field', {
      path: 'video',
    });
  }
  return parsed;
}

function shapeMatches(spec: RolloutTensorSpec, shape: readonly number[]): boolean {
  if (spec.maxLength !== undefined) {
    return shape.length === 1 && shape[0]! >= 1 && shape[0]! <= spec.maxLength;
  }
  return shape.length === spec.shape.length && shape.every((d, i) => d === spec.shape[i]);
}

/**
 * Checks a tensor's header entry against its spec: present, dtype, shape (rules 23–26 of one
 * tensor, without its values).
 * @throws FMT_ROLLOUT_INVALID missing-tensor, tensor-dtype, tensor-shape
 */
export function checkTensorEntry<T extends Pick<SafetensorsTensor, 'dtype' | 'shape'>>(
  spec: RolloutTensorSpec,
  tensor: T | undefined,
): T {
  if (tensor === undefined) {
    throw rolloutInvalid('missing-tensor', `no tensor ${spec.name}`, { tensor: spec.name });
  }
  if (tensor.dtype !== spec.dtype) {
    throw rolloutInvalid('tensor-dtype', `${spec.name} is ${tensor.dtype}, not ${spec.dtype}`, {
      tensor: spec.name,
      dtype: tensor.dtype,
    });
  }
  const { shape } = tensor;
  if (!shapeMatches(spec, shape)) {
    const expected =
      spec.maxLength === undefined ? `[${spec.shape.join(', ')}]` : `[1 .. ${spec.maxLength}]`;
    throw rolloutInvalid(
      'tensor-shape',
      `${spec.name} has shape [${shape.join(', ')}], not ${expected}`,
      { tensor: spec.name, shape: [...shape], expected },
    );
  }
  return tensor;
}

function checkTensor(
  spec: RolloutTensorSpec,
  tensor: SafetensorsTensor | undefined,
): SafetensorsTensor {
  const checked = checkTensorEntry(spec, tensor);
  if (checked.dtype === 'F32' || checked.dtype === 'F64') {
    const at = firstNonFinite(checked.data);
    if (at >= 0) {
      throw rolloutInvalid('non-finite', `${spec.name}[${at}] is ${checked.data[at]}`, {
        tensor: spec.name,
        index: at,
      });
    }
  }
  return checked;
}

function seedsOf(data: BigInt64Array): number[] {
  return Array.from(data, (seed, i) => {
    if (seed < 0n || seed > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw rolloutInvalid('seed-range', `seed ${seed} is outside [0, 2^53)`, {
        tensor: 'seeds',
        index: i,
      });
    }
    return Number(seed);
  });
}

/** The length of a rank-1 tensor, or 0 when it is not one (its own check then refuses it). */
function lengthOf(tensor: Pick<SafetensorsTensor, 'shape'> | undefined): number {
  return tensor?.shape.length === 1 ? tensor.shape[0]! : 0;
}

/**
 * The tensor layout a rollout file's metadata and index-tensor lengths imply, after checking the
 * file holds exactly those tensors (rule 23).
 * @throws FMT_ROLLOUT_INVALID unexpected-tensor
 */
export function checkedTensorLayout(
  metadata: RolloutMetadata,
  tensors: ReadonlyMap<string, Pick<SafetensorsTensor, 'shape'>>,
): readonly RolloutTensorSpec[] {
  const layout = rolloutTensorLayout(metadata, {
    keptLatents: lengthOf(tensors.get('latent_steps')),
    frames: lengthOf(tensors.get('frame_indices')),
  });
  const expected = new Set(layout.map((spec) => spec.name));
  const unexpected = [...tensors.keys()].filter((name) => !expected.has(name));
  if (unexpected.length > 0) {
    throw rolloutInvalid('unexpected-tensor', `unexpected tensors ${unexpected.join(', ')}`, {
      tensors: unexpected,
    });
  }
  return layout;
}

/**
 * Reads a RolloutFile v1 or v2: the safetensors layer (every rule of `readSafetensors`), then
 * `__metadata__` (format, version, exactly its three keys, the record schema of that version),
 * then the tensor set, each tensor's dtype and shape against what the metadata implies,
 * finiteness of every float, the seed range, and v2's index tensors — in the order
 * docs/formats/rollout-file-v2.md § 7 gives (v1's order for a v1 file).
 *
 * Ownership: as `readSafetensors`, the arrays are views of `bytes` where aligned unless
 * `options.copy` is set.
 * @throws FMT_SAFETENSORS_INVALID, FMT_ROLLOUT_INVALID with `details.reason`
 */
export function readRolloutFile(
  bytes: Uint8Array,
  options: ReadSafetensorsOptions = {},
): RolloutFile {
  const file = readSafetensors(bytes, options);
  const metadata = parseMetadataStrings(file.metadata);
  const layout = checkedTensorLayout(metadata, file.tensors);
  const data: Record<string, SafetensorsTensor['data']> = {};
  for (const spec of layout) data[spec.field] = checkTensor(spec, file.tensors.get(spec.name)).data;
  const seeds = seedsOf(data['seeds'] as BigInt64Array);
  const latentSteps =
    (data['latentSteps'] as Int32Array | undefined) ?? everyLatentStep(metadata.steps);
  const frameIndices = (data['frameIndices'] as Int32Array | undefined) ?? null;
  checkRolloutIndices(metadata, latentSteps, frameIndices);
  return new RolloutFile({
    metadata,
    latents: data['latents'] as Float32Array,
    logProbs: (data['logProbs'] as Float64Array | undefined) ?? null,
    seeds,
    sigmas: data['sigmas'] as Float64Array,
    timesteps: data['timesteps'] as Float64Array,
    stepIndices: data['stepIndices'] as Int32Array,
    latentSteps,
    frameIndices,
    frames: (data['frames'] as Uint8Array | undefined) ?? null,
  });
}
