import type { SafetensorsDtype } from '../safetensors/dtypes.js';
import { rolloutFormatVersionOf } from './parse-rollout-metadata.js';
import { rolloutInvalid } from './rollout-error.js';
import type { RolloutFormatVersion, RolloutMetadata, RolloutVideo } from './rollout-metadata.js';

/**
 * One rollout group's trajectory and everything needed to recompute it: the content of a
 * RolloutFile (docs/formats/rollout-file-v1.md, rollout-file-v2.md). Arrays are row-major;
 * T = `steps`, G = `group`, and one sample's latent has `latentDims` (n = their product)
 * elements. A record whose metadata has v2's `video` key is written as v2, any other as v1.
 */
export interface RolloutRecord {
  /** The JSON object in `__metadata__.rollout`. */
  readonly metadata: RolloutMetadata;
  /**
   * `latents` F32 [K, G, ...latentDims]: x_t of each kept step t (`latentSteps`); v1 keeps
   * every step, K = T + 1: x_0 (the initial noise) .. x_T (the samples).
   */
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
  /**
   * v2 `latent_steps` I32 [K]: the step t of each row of `latents`, strictly increasing, ending
   * at T. Absent: every step 0..T (what v1 holds).
   */
  readonly latentSteps?: Int32Array | undefined;
  /** v2 `frame_indices` I32 [N]: which frames of the decoded clip `frames` holds (increasing). */
  readonly frameIndices?: Int32Array | null | undefined;
  /** v2 `frames` U8 [G, N, H, W, 3]: those frames of each sample as RGB bytes. */
  readonly frames?: Uint8Array | null | undefined;
}

/** The record fields that hold a tensor. */
export type RolloutTensorField = Exclude<keyof RolloutRecord, 'metadata'>;

/** The file name, dtype and shape of one tensor of a rollout file. */
export interface RolloutTensorSpec {
  readonly name: string;
  readonly field: RolloutTensorField;
  readonly dtype: SafetensorsDtype;
  readonly shape: readonly number[];
  /** An index tensor (v2): rank 1 with 1 ≤ length ≤ this bound, whatever `shape` says. */
  readonly maxLength?: number;
}

/** The counts a v2 layout depends on: K kept latent rows, N returned frames. */
export interface RolloutCounts {
  readonly keptLatents: number;
  readonly frames: number;
}

/** The decoded clip's geometry of a v2 record (null: no frames, or a v1 record). */
export function rolloutVideoOf(metadata: RolloutMetadata): RolloutVideo | null {
  return rolloutFormatVersionOf(metadata) === '2'
    ? ((metadata as { video?: RolloutVideo | null }).video ?? null)
    : null;
}

/**
 * The tensors a rollout file with this metadata holds, in the order a reader checks them (§ 7
 * of the specs): v1's table, then v2's `latent_steps` before `latents` and `frame_indices`,
 * `frames` last. The writer sorts them by name; the counts size v2's kept rows and frames.
 */
export function rolloutTensorLayout(
  metadata: RolloutMetadata,
  counts?: RolloutCounts,
): readonly RolloutTensorSpec[] {
  const { steps: t, group: g, latentDims } = metadata;
  const version: RolloutFormatVersion = rolloutFormatVersionOf(metadata);
  const kept = version === '2' ? (counts?.keptLatents ?? t + 1) : t + 1;
  const layout: RolloutTensorSpec[] = [];
  if (version === '2') {
    layout.push({
      name: 'latent_steps',
      field: 'latentSteps',
      dtype: 'I32',
      shape: [kept],
      maxLength: t + 1,
    });
  }
  layout.push({ name: 'latents', field: 'latents', dtype: 'F32', shape: [kept, g, ...latentDims] });
  if (metadata.sampler === 'sde') {
    layout.push({ name: 'log_probs', field: 'logProbs', dtype: 'F64', shape: [t, g] });
  }
  layout.push(
    { name: 'seeds', field: 'seeds', dtype: 'I64', shape: [g] },
    { name: 'sigmas', field: 'sigmas', dtype: 'F64', shape: [t + 1] },
    { name: 'step_indices', field: 'stepIndices', dtype: 'I32', shape: [t] },
    { name: 'timesteps', field: 'timesteps', dtype: 'F64', shape: [t] },
  );
  const video = rolloutVideoOf(metadata);
  if (video !== null) {
    const n = counts?.frames ?? 0;
    layout.push(
      {
        name: 'frame_indices',
        field: 'frameIndices',
        dtype: 'I32',
        shape: [n],
        maxLength: video.frames,
      },
      {
        name: 'frames',
        field: 'frames',
        dtype: 'U8',
        shape: [g, n, video.height, video.width, 3],
      },
    );
  }
  return layout;
}

/** Every step 0..T: the kept rows of a v1 file (and of a v2 file that keeps them all). */
export function everyLatentStep(steps: number): Int32Array {
  return Int32Array.from({ length: steps + 1 }, (_, i) => i);
}

/**
 * Where an index tensor breaks its rule (strictly increasing, in [0, bound), and for
 * `latent_steps` ending at T = bound − 1): a message, or undefined when it holds.
 */
function indexProblem(values: Int32Array, bound: number, endsAtLast: boolean): string | undefined {
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v < 0 || v >= bound) return `[${i}] = ${v} is outside [0, ${bound})`;
    if (i > 0 && v <= values[i - 1]!) return `[${i}] = ${v} does not increase`;
  }
  if (endsAtLast && values[values.length - 1] !== bound - 1) {
    return `ends at ${values[values.length - 1]}, not ${bound - 1}`;
  }
  return undefined;
}

/**
 * Checks the values of v2's index tensors: `latent_steps` strictly increasing in [0, T] and
 * ending at T; `frame_indices` strictly increasing in [0, video.frames).
 * @throws FMT_ROLLOUT_INVALID latent-steps, frame-indices
 */
export function checkRolloutIndices(
  metadata: RolloutMetadata,
  latentSteps: Int32Array,
  frameIndices: Int32Array | null,
): void {
  const steps = indexProblem(latentSteps, metadata.steps + 1, true);
  if (steps !== undefined) {
    throw rolloutInvalid('latent-steps', `latent_steps${steps}`, { tensor: 'latent_steps' });
  }
  const video = rolloutVideoOf(metadata);
  if (video !== null && frameIndices !== null) {
    const frames = indexProblem(frameIndices, video.frames, false);
    if (frames !== undefined) {
      throw rolloutInvalid('frame-indices', `frame_indices${frames}`, { tensor: 'frame_indices' });
    }
  }
}

/** Float values of a rollout file must be finite: the index of the first that is not, or -1. */
export function firstNonFinite(values: Float32Array | Float64Array): number {
  for (let i = 0; i < values.length; i++) if (!Number.isFinite(values[i])) return i;
  return -1;
}
