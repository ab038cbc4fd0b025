import { canonicalJson } from '../canonical-json.js';
import type { SafetensorsTensor } from '../safetensors/dtypes.js';
import { writeSafetensors } from '../safetensors/write-safetensors.js';
import { parseRolloutMetadata } from './parse-rollout-metadata.js';
import { rolloutInvalid } from './rollout-error.js';
import { ROLLOUT_FORMAT, ROLLOUT_FORMAT_VERSION } from './rollout-metadata.js';
import { firstNonFinite, rolloutTensorLayout, type RolloutRecord } from './rollout-record.js';

function seedsTensor(seeds: readonly number[]): BigInt64Array {
  return BigInt64Array.from(seeds, (seed, i) => {
    if (!Number.isSafeInteger(seed) || seed < 0) {
      throw rolloutInvalid('seed-range', `seed ${seed} is not an integer in [0, 2^53)`, {
        tensor: 'seeds',
        index: i,
      });
    }
    return BigInt(seed);
  });
}

/**
 * Encodes a rollout record as a RolloutFile v1 (docs/formats/rollout-file-v1.md): the tensors of
 * `rolloutTensorLayout`, and `__metadata__` = {format, format_version, rollout: canonical JSON of
 * the metadata}. The bytes are a pure function of the record (name-sorted tensors, sorted keys),
 * so a retried job writes the same file.
 * @throws FMT_ROLLOUT_INVALID rollout-schema, missing-tensor / unexpected-tensor (log-probs
 *   present for `ode` or absent for `sde`), tensor-shape, non-finite, seed-range
 */
export function writeRolloutFile(record: RolloutRecord): Uint8Array {
  const metadata = parseRolloutMetadata(record.metadata);
  const tensors: Record<string, SafetensorsTensor> = {};
  if (metadata.sampler === 'ode' && record.logProbs !== null) {
    throw rolloutInvalid('unexpected-tensor', 'an ode rollout has no log-probs', {
      tensor: 'log_probs',
    });
  }
  for (const spec of rolloutTensorLayout(metadata)) {
    const value = record[spec.field];
    if (value === null) {
      throw rolloutInvalid('missing-tensor', `an ${metadata.sampler} rollout needs ${spec.name}`, {
        tensor: spec.name,
      });
    }
    const expected = spec.shape.reduce((a, b) => a * b, 1);
    if (value.length !== expected) {
      throw rolloutInvalid(
        'tensor-shape',
        `${spec.name} holds ${value.length} values for shape [${spec.shape.join(', ')}]`,
        { tensor: spec.name, values: value.length, expected },
      );
    }
    if (value instanceof Float32Array || value instanceof Float64Array) {
      const at = firstNonFinite(value);
      if (at >= 0) {
        throw rolloutInvalid('non-finite', `${spec.name}[${at}] is ${value[at]}`, {
          tensor: spec.name,
          index: at,
        });
      }
    }
    const data = spec.field === 'seeds' ? seedsTensor(record.seeds) : value;
    tensors[spec.name] = { dtype: spec.dtype, shape: spec.shape, data } as SafetensorsTensor;
  }
  return writeSafetensors(tensors, {
    format: ROLLOUT_FORMAT,
    format_version: ROLLOUT_FORMAT_VERSION,
    rollout: canonicalJson(metadata),
  });
}
