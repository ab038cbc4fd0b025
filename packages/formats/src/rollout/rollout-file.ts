import { FlowfleetError } from '@flowfleet/errors';
import { rolloutFormatVersionOf } from './parse-rollout-metadata.js';
import type { RolloutFormatVersion, RolloutMetadata, RolloutVideo } from './rollout-metadata.js';
import { everyLatentStep, rolloutVideoOf, type RolloutRecord } from './rollout-record.js';

function checkIndex(value: number, size: number, what: 'step' | 'sample' | 'frame'): void {
  if (!Number.isInteger(value) || value < 0 || value >= size) {
    throw new FlowfleetError('FMT_INVALID_ARGUMENT', `${what} ${value} is not in [0, ${size})`, {
      details: { argument: what, value, size },
    });
  }
}

/**
 * A rollout file (v1 or v2) as read by `readRolloutFile`: the record, plus accessors for its
 * layout. Its arrays may be views of the bytes it was read from (see `readSafetensors`).
 */
export class RolloutFile implements RolloutRecord {
  readonly metadata: RolloutMetadata;
  readonly latents: Float32Array;
  readonly logProbs: Float64Array | null;
  readonly seeds: readonly number[];
  readonly sigmas: Float64Array;
  readonly timesteps: Float64Array;
  readonly stepIndices: Int32Array;
  /** The step t of each row of `latents` (v1: every step 0..T). */
  readonly latentSteps: Int32Array;
  /** Which frames of the decoded clip `frames` holds; null when the file has none. */
  readonly frameIndices: Int32Array | null;
  /** U8 [G, N, H, W, 3]: the returned frames of each sample as RGB bytes; null when none. */
  readonly frames: Uint8Array | null;

  /** Wraps a record that `readRolloutFile` (or `writeRolloutFile`) has validated. */
  constructor(record: RolloutRecord) {
    this.metadata = record.metadata;
    this.latents = record.latents;
    this.logProbs = record.logProbs;
    this.seeds = record.seeds;
    this.sigmas = record.sigmas;
    this.timesteps = record.timesteps;
    this.stepIndices = record.stepIndices;
    this.latentSteps = record.latentSteps ?? everyLatentStep(record.metadata.steps);
    this.frameIndices = record.frameIndices ?? null;
    this.frames = record.frames ?? null;
  }

  /** The file's `format_version`: 2 when the record has v2's `video` key. */
  get formatVersion(): RolloutFormatVersion {
    return rolloutFormatVersionOf(this.metadata);
  }

  /** The decoded clip's geometry (frames, height, width), or null when the file has no frames. */
  get video(): RolloutVideo | null {
    return rolloutVideoOf(this.metadata);
  }

  /** Denoise steps T. */
  get steps(): number {
    return this.metadata.steps;
  }

  /** Samples G. */
  get group(): number {
    return this.metadata.group;
  }

  /** One sample's latent shape. */
  get latentDims(): readonly number[] {
    return this.metadata.latentDims;
  }

  /** Elements of one sample's latent (the product of `latentDims`). */
  get sampleSize(): number {
    return this.latentDims.reduce((a, b) => a * b, 1);
  }

  /** Whether the file kept the latent x_step (a v1 file keeps every step). */
  hasLatent(step: number): boolean {
    return this.latentSteps.includes(step);
  }

  /**
   * The latent of `sample` after `step` denoise steps (0 = the initial noise x_0, T = the final
   * sample): a view of `sampleSize` values into `latents`.
   * @throws FMT_INVALID_ARGUMENT when an index is out of range or the step's latent was not kept
   */
  latent(step: number, sample: number): Float32Array {
    checkIndex(step, this.steps + 1, 'step');
    checkIndex(sample, this.group, 'sample');
    const row = this.latentSteps.indexOf(step);
    if (row < 0) {
      throw new FlowfleetError(
        'FMT_INVALID_ARGUMENT',
        `step ${step}'s latent is not kept (kept: ${this.latentSteps.join(', ')})`,
        { details: { argument: 'step', value: step, kept: Array.from(this.latentSteps) } },
      );
    }
    const n = this.sampleSize;
    const start = (row * this.group + sample) * n;
    return this.latents.subarray(start, start + n);
  }

  /** The final latent x_T of `sample` (a view; always kept). @throws as {@link RolloutFile.latent} */
  finalLatent(sample: number): Float32Array {
    return this.latent(this.steps, sample);
  }

  /**
   * The T per-step log-probs of `sample` (a copy: `logProbs` is step-major), or null for `ode`.
   * @throws FMT_INVALID_ARGUMENT when `sample` is out of range
   */
  logProbsOf(sample: number): Float64Array | null {
    checkIndex(sample, this.group, 'sample');
    const { logProbs } = this;
    if (logProbs === null) return null;
    return Float64Array.from(
      { length: this.steps },
      (_, step) => logProbs[step * this.group + sample]!,
    );
  }

  /**
   * The `at`-th returned frame of `sample` (clip frame `frameIndices[at]`): a view of H·W·3 RGB
   * bytes, row-major [H, W, 3].
   * @throws FMT_INVALID_ARGUMENT when the file has no frames or an index is out of range
   */
  frame(sample: number, at: number): Uint8Array {
    const { frames, frameIndices, video } = this;
    if (frames === null || frameIndices === null || video === null) {
      throw new FlowfleetError('FMT_INVALID_ARGUMENT', 'the rollout returned no frames', {
        details: { argument: 'frame', value: at, size: 0 },
      });
    }
    checkIndex(sample, this.group, 'sample');
    checkIndex(at, frameIndices.length, 'frame');
    const size = video.height * video.width * 3;
    const start = (sample * frameIndices.length + at) * size;
    return frames.subarray(start, start + size);
  }
}
