import { FlowfleetError } from '@flowfleet/errors';
import { z } from 'zod';
import {
  readSafetensors,
  type SafetensorsArrays,
  type SafetensorsDtype,
  type SafetensorsFile,
} from './read-safetensors.js';

/** `__metadata__.format` of a rollout result file (the runtime's `ROLLOUT_FORMAT`). */
export const ROLLOUT_FILE_FORMAT = 'flowfleet.rollout';
/** `__metadata__.format_version` this client reads. */
export const ROLLOUT_FILE_VERSION = '1';

const Count = z.int().min(0);

/**
 * The JSON in `__metadata__.rollout`: what the runtime records beside the tensors. The layout
 * fields are required; the rest are optional because the worker drops per-attempt fields
 * (`timings`, `captureStats`) to keep the file a pure function of job, weights and backend.
 * Unknown keys are kept.
 */
export const RolloutMetadataSchema = z.looseObject({
  steps: z.int().min(1),
  group: z.int().min(1),
  latentDims: z.tuple([Count, Count, Count, Count]),
  model: z.string().optional(),
  loopId: z.string().optional(),
  prompt: z.string().optional(),
  negativePrompt: z.string().optional(),
  sampler: z.string().optional(),
  noiseLevel: z.number().optional(),
  guidanceScale: z.number().optional(),
  shift: z.number().nullable().optional(),
  weightsVersions: z.record(z.string(), z.int()).optional(),
  backend: z.record(z.string(), z.string()).optional(),
  platform: z.looseObject({ device: z.string(), arch: z.string() }).optional(),
  interceptors: z.array(z.string()).optional(),
  captureStats: z.record(z.string(), z.unknown()).optional(),
  timings: z.record(z.string(), z.unknown()).optional(),
});
/** The rollout metadata of a result file. */
export type RolloutMetadata = z.infer<typeof RolloutMetadataSchema>;

function invalid(message: string, details: Record<string, unknown> = {}): FlowfleetError {
  return new FlowfleetError('CLIENT_RESULT_INVALID', `invalid rollout file: ${message}`, {
    details,
  });
}

function parseMetadata(file: SafetensorsFile): RolloutMetadata {
  const { format, format_version: version, rollout } = file.metadata;
  if (format !== ROLLOUT_FILE_FORMAT) {
    throw invalid(`format is ${String(format)}, expected ${ROLLOUT_FILE_FORMAT}`, {
      format: format ?? null,
    });
  }
  if (version !== ROLLOUT_FILE_VERSION) {
    throw invalid(`format_version ${String(version)} is not supported (this client reads 1)`, {
      version: version ?? null,
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(rollout ?? '');
  } catch (cause) {
    throw new FlowfleetError(
      'CLIENT_RESULT_INVALID',
      'invalid rollout file: __metadata__.rollout is not JSON',
      { details: {}, cause },
    );
  }
  const parsed = RolloutMetadataSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalid(
      `__metadata__.rollout ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}

function tensorOf<D extends SafetensorsDtype>(
  file: SafetensorsFile,
  name: string,
  dtype: D,
  shape: readonly number[],
): SafetensorsArrays[D] {
  const tensor = file.tensors[name];
  if (tensor === undefined) throw invalid(`missing tensor ${name}`, { tensor: name });
  if (tensor.dtype !== dtype) {
    throw invalid(`tensor ${name} is ${tensor.dtype}, expected ${dtype}`, { tensor: name });
  }
  if (tensor.shape.length !== shape.length || tensor.shape.some((d, i) => d !== shape[i])) {
    throw invalid(
      `tensor ${name} has shape [${tensor.shape.join(', ')}], expected [${shape.join(', ')}]`,
      { tensor: name },
    );
  }
  return tensor.data as SafetensorsArrays[D];
}

function checkIndex(value: number, size: number, what: string): void {
  if (!Number.isInteger(value) || value < 0 || value >= size) {
    throw new FlowfleetError('CLIENT_INVALID_OPTIONS', `${what} ${value} is not in [0, ${size})`, {
      details: { option: what, value, size },
    });
  }
}

/**
 * A rollout result read into typed arrays, with accessors for its layout (T steps, G samples,
 * one sample's latent dims [C, F, H, W], n = C·F·H·W): `latents` F32 [T+1, G, C, F, H, W]
 * (x_0..x_T), `logProbs` F64 [T, G] (0 for the ODE sampler), `seeds` [G], `sigmas` F64 [T+1],
 * `timesteps` F64 [T] (1000·σ_i), `stepIndices` I32 [T].
 */
export class RolloutFile {
  readonly metadata: RolloutMetadata;
  /** Denoise steps T. */
  readonly steps: number;
  /** Samples G. */
  readonly group: number;
  /** One sample's latent dims [C, F, H, W]. */
  readonly latentDims: readonly [number, number, number, number];
  readonly latents: Float32Array;
  readonly logProbs: Float64Array;
  readonly seeds: readonly number[];
  readonly sigmas: Float64Array;
  readonly timesteps: Float64Array;
  readonly stepIndices: Int32Array;
  /** Every tensor and metadata string of the file (extra tensors included). */
  readonly safetensors: SafetensorsFile;

  constructor(file: SafetensorsFile) {
    const metadata = parseMetadata(file);
    const { steps: t, group: g, latentDims } = metadata;
    this.metadata = metadata;
    this.steps = t;
    this.group = g;
    this.latentDims = latentDims;
    this.safetensors = file;
    this.latents = tensorOf(file, 'latents', 'F32', [t + 1, g, ...latentDims]);
    this.logProbs = tensorOf(file, 'log_probs', 'F64', [t, g]);
    this.sigmas = tensorOf(file, 'sigmas', 'F64', [t + 1]);
    this.timesteps = tensorOf(file, 'timesteps', 'F64', [t]);
    this.stepIndices = tensorOf(file, 'step_indices', 'I32', [t]);
    const seeds = tensorOf(file, 'seeds', 'I64', [g]);
    this.seeds = Array.from(seeds, (seed) => {
      if (seed < 0n || seed > BigInt(Number.MAX_SAFE_INTEGER)) {
        throw invalid(`seed ${seed} is outside [0, 2^53)`, { tensor: 'seeds' });
      }
      return Number(seed);
    });
  }

  /** Elements of one sample's latent: C·F·H·W. */
  get sampleSize(): number {
    return this.latentDims.reduce((a, b) => a * b, 1);
  }

  /**
   * The latent of `sample` after `step` denoise steps (0 = the initial noise x_0, T = the final
   * sample): a view of n values into `latents`.
   * @throws FlowfleetError CLIENT_INVALID_OPTIONS when an index is out of range
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
   * The per-step log-probs of `sample`: T values (a copy; `logProbs` is step-major).
   * @throws FlowfleetError CLIENT_INVALID_OPTIONS when `sample` is out of range
   */
  logProbsOf(sample: number): Float64Array {
    checkIndex(sample, this.group, 'sample');
    return Float64Array.from({ length: this.steps }, (_, step) => {
      return this.logProbs[step * this.group + sample] as number;
    });
  }
}

/**
 * Reads a rollout result file (the runtime's `writeRolloutResult` format, version 1).
 * @throws FlowfleetError CLIENT_RESULT_INVALID naming what is wrong
 */
export function readRolloutFile(bytes: Uint8Array): RolloutFile {
  return new RolloutFile(readSafetensors(bytes));
}
