import { FlowfleetError } from '@flowfleet/errors';
import type { RolloutMetadata } from './rollout-metadata.js';
import type { RolloutRecord } from './rollout-record.js';

function checkIndex(value: number, size: number, what: 'step' | 'sample'): void {
  if (!Number.isInteger(value) || value < 0 || value >= size) {
    throw new FlowfleetError('FMT_INVALID_ARGUMENT', `${what} ${value} is not in [0, ${size})`, {
      details: { argument: what, value, size },
    });
  }
}

/**
 * A rollout file as read by `readRolloutFile`: the record, plus accessors for its layout. Its
 * arrays may be views of the bytes it was read from (see `readSafetensors`).
 */
export class RolloutFile implements RolloutRecord {
  readonly metadata: RolloutMetadata;
  readonly latents: Float32Array;
  readonly logProbs: Float64Array | null;
  readonly seeds: readonly number[];
  readonly sigmas: Float64Array;
  readonly timesteps: Float64Array;
  readonly stepIndices: Int32Array;

  /** Wraps a record that `readRolloutFile` (or `writeRolloutFile`) has validated. */
  constructor(record: RolloutRecord) {
    this.metadata = record.metadata;
    this.latents = record.latents;
    this.logProbs = record.logProbs;
    this.seeds = record.seeds;
    this.sigmas = record.sigmas;
    this.timesteps = record.timesteps;
    this.stepIndices = record.stepIndices;
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

  /**
   * The latent of `sample` after `step` denoise steps (0 = the initial noise x_0, T = the final
   * sample): a view of `sampleSize` values into `latents`.
   * @throws FMT_INVALID_ARGUMENT when an index is out of range
   */
  latent(step: number, sample: number): Float32Array {
    checkIndex(step, this.steps + 1, 'step');
    checkIndex(sample, this.group, 'sample');
    const n = this.sampleSize;
    const start = (step * this.group + sample) * n;
    return this.latents.subarray(start, start + n);
  }

  /** The final latent x_T of `sample` (a view). @throws as {@link RolloutFile.latent} */
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
}
