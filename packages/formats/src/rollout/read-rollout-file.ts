import { duplicateJsonKey } from '../safetensors/duplicate-json-key.js';
import type { SafetensorsTensor } from '../safetensors/dtypes.js';
import { readSafetensors, type ReadSafetensorsOptions } from '../safetensors/read-safetensors.js';
import { parseRolloutMetadata } from './parse-rollout-metadata.js';
import { rolloutInvalid } from './rollout-error.js';
import { RolloutFile } from './rollout-file.js';
import {
  ROLLOUT_FORMAT,
  ROLLOUT_FORMAT_VERSION,
  type RolloutMetadata,
} from './rollout-metadata.js';
import { firstNonFinite, rolloutTensorLayout, type RolloutTensorSpec } from './rollout-record.js';

const METADATA_KEYS = ['format', 'format_version', 'rollout'];

function parseMetadataStrings(metadata: Readonly<Record<string, string>>): RolloutMetadata {
  const { format, format_version: version, rollout } = metadata;
  if (format !== ROLLOUT_FORMAT) {
    throw rolloutInvalid(
      'not-rollout',
      `format is ${JSON.stringify(format)}, not ${ROLLOUT_FORMAT}`,
      {
        format: format ?? null,
      },
    );
  }
  if (version !== ROLLOUT_FORMAT_VERSION) {
    throw rolloutInvalid(
      'unsupported-version',
      `format_version ${JSON.stringify(version)} is not 1`,
      {
        version: version ?? null,
      },
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
  return parseRolloutMetadata(value);
}

function checkTensor(
  spec: RolloutTensorSpec,
  tensor: SafetensorsTensor | undefined,
): SafetensorsTensor {
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
  if (shape.length !== spec.shape.length || shape.some((d, i) => d !== spec.shape[i])) {
    throw rolloutInvalid(
      'tensor-shape',
      `${spec.name} has shape [${shape.join(', ')}], not [${spec.shape.join(', ')}]`,
      { tensor: spec.name, shape: [...shape], expected: [...spec.shape] },
    );
  }
  if (tensor.dtype === 'F32' || tensor.dtype === 'F64') {
    const at = firstNonFinite(tensor.data);
    if (at >= 0) {
      throw rolloutInvalid('non-finite', `${spec.name}[${at}] is ${tensor.data[at]}`, {
        tensor: spec.name,
        index: at,
      });
    }
  }
  return tensor;
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

/**
 * Reads a RolloutFile v1: the safetensors layer (every rule of `readSafetensors`), then
 * `__metadata__` (format, version, exactly its three keys, the record schema), then the tensor
 * set, each tensor's dtype and shape against what the metadata implies, finiteness of every
 * float, and the seed range — in the order docs/formats/rollout-file-v1.md gives.
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
  const layout = rolloutTensorLayout(metadata);
  const expected = new Set(layout.map((spec) => spec.name));
  const unexpected = [...file.tensors.keys()].filter((name) => !expected.has(name));
  if (unexpected.length > 0) {
    throw rolloutInvalid('unexpected-tensor', `unexpected tensors ${unexpected.join(', ')}`, {
      tensors: unexpected,
    });
  }
  const data: Record<string, SafetensorsTensor['data']> = {};
  for (const spec of layout) data[spec.field] = checkTensor(spec, file.tensors.get(spec.name)).data;
  return new RolloutFile({
    metadata,
    latents: data['latents'] as Float32Array,
    logProbs: (data['logProbs'] as Float64Array | undefined) ?? null,
    seeds: seedsOf(data['seeds'] as BigInt64Array),
    sigmas: data['sigmas'] as Float64Array,
    timesteps: data['timesteps'] as Float64Array,
    stepIndices: data['stepIndices'] as Int32Array,
  });
}
