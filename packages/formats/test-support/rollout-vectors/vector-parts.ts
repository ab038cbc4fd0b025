// Building blocks of the malformed RolloutFile v1 vectors: a valid file's parts, to break one rule.
import type { SafetensorsTensor } from '../../src/safetensors/dtypes.js';
import type { SafetensorsInvalidReason } from '../../src/safetensors/safetensors-error.js';
import { rawSafetensors } from '../raw-safetensors.js';
import { writeSafetensors } from '../../src/safetensors/write-safetensors.js';
import { canonicalJson } from '../../src/canonical-json.js';
import type { RolloutInvalidReason } from '../../src/rollout/rollout-error.js';
import type { RolloutMetadata } from '../../src/rollout/rollout-metadata.js';

/** A malformed vector: bytes a reader must refuse, with the code and reason it must give. */
export interface InvalidVectorSpec {
  readonly name: string;
  readonly about: string;
  readonly code: 'FMT_SAFETENSORS_INVALID' | 'FMT_ROLLOUT_INVALID';
  readonly reason: SafetensorsInvalidReason | RolloutInvalidReason;
  readonly bytes: Uint8Array;
}

export type Tensors = Record<string, SafetensorsTensor>;

export const METADATA: RolloutMetadata = {
  model: 'toy-dit',
  loopId: 'toy.denoise',
  prompt: 'p',
  negativePrompt: '',
  sampler: 'sde',
  steps: 2,
  group: 2,
  latentDims: [2, 2],
  noiseLevel: 0.7,
  guidanceScale: 1,
  shift: 3,
  weightsVersions: { dit: 1 },
  backend: { dit: 'cpu-reference' },
  platform: { device: 'cpu', arch: 'generic' },
  interceptors: [],
};

/** The tensors of a valid file with METADATA and T steps, G samples (latent [2, 2]). */
export function tensors(t = 2, g = 2): Tensors {
  const sigmas = Float64Array.from({ length: t + 1 }, (_, i) => 1 - i / t);
  return {
    latents: {
      dtype: 'F32',
      shape: [t + 1, g, 2, 2],
      data: Float32Array.from({ length: (t + 1) * g * 4 }, (_, i) => i / 8),
    },
    log_probs: {
      dtype: 'F64',
      shape: [t, g],
      data: Float64Array.from({ length: t * g }, (_, i) => -1.5 - i),
    },
    seeds: {
      dtype: 'I64',
      shape: [g],
      data: BigInt64Array.from({ length: g }, (_, i) => BigInt(i + 1)),
    },
    sigmas: { dtype: 'F64', shape: [t + 1], data: sigmas },
    step_indices: { dtype: 'I32', shape: [t], data: Int32Array.from({ length: t }, (_, i) => i) },
    timesteps: { dtype: 'F64', shape: [t], data: sigmas.slice(0, t).map((s) => 1000 * s) },
  };
}

export function strings(metadata: unknown = METADATA): Record<string, string> {
  return { format: 'flowfleet.rollout', format_version: '1', rollout: canonicalJson(metadata) };
}

/** A file written by the codec with these tensors and `__metadata__` strings. */
export function file(t: Tensors = tensors(), meta: Record<string, string> = strings()): Uint8Array {
  return writeSafetensors(t, meta);
}

/** A valid file's header object and data section, to edit and reassemble with `rawSafetensors`. */
export function parts(): { header: Record<string, Record<string, unknown>>; data: Uint8Array } {
  const bytes = file();
  const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))) as Record<
    string,
    Record<string, unknown>
  >;
  return { header, data: bytes.slice(8 + n) };
}

export function edited(
  edit: (header: Record<string, Record<string, unknown>>) => void,
  data?: Uint8Array,
) {
  const p = parts();
  edit(p.header);
  return rawSafetensors(p.header, data ?? p.data);
}

export function withLength(length: bigint): Uint8Array {
  const bytes = file().slice();
  new DataView(bytes.buffer).setBigUint64(0, length, true);
  return bytes;
}

export function headerText(edit: (text: string) => string): Uint8Array {
  const p = parts();
  return rawSafetensors(edit(JSON.stringify(p.header)), p.data);
}

export const S = 'FMT_SAFETENSORS_INVALID';
export const R = 'FMT_ROLLOUT_INVALID';
