import type { ResolvedSamplingRequest, TextEmbeddings } from '../sampling/sampling-request.js';
import type { DrivenLoop, StepResult } from './loop-types.js';

/**
 * What a card's rollout loop hands back when it finishes: the trajectory and the schedule. The
 * runtime adds the request, weights, backend and timings around it. Layouts are row-major.
 */
export interface RolloutTrajectory {
  /** Samples G. */
  readonly group: number;
  /** One sample's latent dims; the rank is the card's (e.g. [C, F, H, W] for a video DiT). */
  readonly latentDims: readonly number[];
  /** x_0..x_T: [T + 1, G, ...latentDims] float32. */
  readonly latents: Float32Array;
  /** Per-step, per-sample log-probs [T, G] float64 (0 for the ODE sampler). */
  readonly logProbs: Float64Array;
  /** σ_0..σ_T [T + 1] float64. */
  readonly sigmas: Float64Array;
  /** t_i = 1000·σ_i [T] float64. */
  readonly timesteps: Float64Array;
  /** Step index of each row of logProbs [T]. */
  readonly stepIndices: Int32Array;
}

/**
 * What a rollout loop runs: the resolved request, plus the loaded text embeddings its references
 * name when the card's text input is embeddings (the worker fetches and checks them; the loop pads
 * them to the card's text length).
 */
export interface RolloutLoopRequest extends ResolvedSamplingRequest {
  readonly textEmbeddings?: TextEmbeddings | undefined;
}

/**
 * The driven loop a card runs a rollout with. Its state type is the card's own; steps whose
 * `StepInfo.kind` is `denoise` are the rollout's T denoise steps (progress and timings count
 * them), any other kind (e.g. `encode`) is preparation.
 */
export type RolloutLoop = DrivenLoop<RolloutLoopRequest, unknown, StepResult, RolloutTrajectory>;
