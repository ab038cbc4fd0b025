import type { SafetensorsDtype } from '../safetensors/dtypes.js';
import type { RolloutMetadata } from './rollout-metadata.js';

/**
 * One rollout group's trajectory and everything needed to recompute it: the content of a
 * RolloutFile v1 (docs/formats/rollout-file-v1.md). Arrays are row-major; T = `steps`,
 * G = `group`, and one sample's latent has `latentDims` (n = their product) elements.
 */
export interface RolloutRecord {
  /** The JSON object in `__metadata__.rollout`. */
  readonly metadata: RolloutMetadata;
  /** `latents` F32 [T + 1, G, ...latentDims]: x_0 (the initial noise) .. x_T (the samples). */
  readonly latents: Float32Array;
  /** `log_probs` F64 [T, G] (step-major) for the `sde` sampler; null (no tensor) for `ode`. */
  readonly logProbs: Float64Array | null;
  /** `seeds` I64 [G], each in [0, 2^53). */
  readonly seeds: readonly number[];
  /** `sigmas` F64 [T + 1]: σ_0 .. σ_T. */
  readonly sigmas: Float64Array;
  /** `timesteps` F64 [T]: the timestep the forward of step i was given (e.g. 1000·σ_i). */
  readonly timesteps: Float64Array;
  /** `step_indices` I32 [T]: the step index of each row of `log_probs`. */
  readonly stepIndices: Int32Array;
}

/** The file name, dtype and shape of one tensor of a rollout file. */
export interface RolloutTensorSpec {
  readonly name: string;
  readonly field: Exclude<keyof RolloutRecord, 'metadata'>;
  readonly dtype: SafetensorsDtype;
  readonly shape: readonly number[];
}

/**
 * The tensors a rollout file with this metadata holds, in file (name) order: the layout the
 * writer produces and the reader demands.
 */
export function rolloutTensorLayout(metadata: RolloutMetadata): readonly RolloutTensorSpec[] {
  const { steps: t, group: g, latentDims } = metadata;
  const layout: RolloutTensorSpec[] = [
    { name: 'latents', field: 'latents', dtype: 'F32', shape: [t + 1, g, ...latentDims] },
  ];
  if (metadata.sampler === 'sde') {
    layout.push({ name: 'log_probs', field: 'logProbs', dtype: 'F64', shape: [t, g] });
  }
  layout.push(
    { name: 'seeds', field: 'seeds', dtype: 'I64', shape: [g] },
    { name: 'sigmas', field: 'sigmas', dtype: 'F64', shape: [t + 1] },
    { name: 'step_indices', field: 'stepIndices', dtype: 'I32', shape: [t] },
    { name: 'timesteps', field: 'timesteps', dtype: 'F64', shape: [t] },
  );
  return layout;
}

/** Float values of a rollout file must be finite: the index of the first that is not, or -1. */
export function firstNonFinite(values: Float32Array | Float64Array): number {
  for (let i = 0; i < values.length; i++) if (!Number.isFinite(values[i])) return i;
  return -1;
}
