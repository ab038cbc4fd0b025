import { canonicalJson } from '../canonical-json.js';
import type { SafetensorsTensor } from '../safetensors/dtypes.js';
import { writeSafetensors } from '../safetensors/write-safetensors.js';
import { parseRolloutMetadata, rolloutFormatVersionOf } from './parse-rollout-metadata.js';
import { rolloutInvalid } from './rollout-error.js';
import { ROLLOUT_FORMAT } from './rollout-metadata.js';
import {
  checkRolloutIndices,
  everyLatentStep,
  firstNonFinite,
  rolloutTensorLayout,
  rolloutVideoOf,
  type RolloutRecord,
} from './rollout-record.js';

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

function isEveryStep(latentSteps: Int32Array | undefined, steps: number): boolean {
  return (
    latentSteps === undefined ||
    (latentSteps.length === steps + 1 && latentSteps.every((t, i) => t === i))
  );
}

/**
 * Encodes a rollout record as a RolloutFile: v2 (docs/formats/rollout-file-v2.md) when its
 * metadata has v2's `video` key, else v1 (rollout-file-v1.md) — so a latents-only rollout is
 * written as it always was. The tensors are those of `rolloutTensorLayout`; `__metadata__` =
 * {format, format_version, rollout: canonical JSON of the metadata}. The bytes are a pure
 * function of the record (name-sorted tensors, sorted keys), so a retried job writes the same
 * file.
 * @throws FMT_ROLLOUT_INVALID rollout-schema, missing-tensor / unexpected-tensor (log-probs
 *   present for `ode` or absent for `sde`; frames without v2's `video` or the reverse),
 *   tensor-shape, non-finite, seed-range, latent-steps, frame-indices
 */
export function writeRolloutFile(record: RolloutRecord): Uint8Array {
  const version = rolloutFormatVersionOf(record.metadata);
  const metadata = parseRolloutMetadata(record.metadata, version);
  if (metadata.sampler === 'ode' && record.logProbs !== null) {
    throw rolloutInvalid('unexpected-tensor', 'an ode rollout has no log-probs', {
      tensor: 'log_probs',
    });
  }
  const video = rolloutVideoOf(metadata);
  const frames = record.frames ?? null;
  const frameIndices = record.frameIndices ?? null;
  if (video === null && (frames !== null || frameIndices !== null)) {
    throw rolloutInvalid('unexpected-tensor', 'frames need a v2 record with a video geometry', {
      tensor: 'frames',
    });
  }
  if (version === '1' && !isEveryStep(record.latentSteps, metadata.steps)) {
    throw rolloutInvalid('unexpected-tensor', 'a kept-steps window needs a v2 record (video)', {
      tensor: 'latent_steps',
    });
  }
  const latentSteps = record.latentSteps ?? everyLatentStep(metadata.steps);
  const filled: RolloutRecord = { ...record, metadata, latentSteps, frames, frameIndices };
  const layout = rolloutTensorLayout(metadata, {
    keptLatents: latentSteps.length,
    frames: frameIndices?.length ?? 0,
  });
  const tensors: Record<string, SafetensorsTensor> = {};
  for (const spec of layout) {
    const value = filled[spec.field];
    if (value === null || value === undefined) {
      throw rolloutInvalid('missing-tensor', `an ${metadata.sampler} rollout needs ${spec.name}`, {
        tensor: spec.name,
      });
    }
    const expected = spec.shape.reduce((a, b) => a * b, 1);
    if (
      value.length !== expected ||
      (spec.maxLength !== undefined && (value.length < 1 || value.length > spec.maxLength))
    ) {
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
  checkRolloutIndices(metadata, latentSteps, frameIndices);
  return writeSafetensors(tensors, {
    format: ROLLOUT_FORMAT,
    format_version: version,
    rollout: canonicalJson(metadata),
  });
}
