import type { CaptureStats } from './capture-stats.js';
import type { Sampler } from '@flowfleet/models';

/** Where a step's time went, summed over the rollout (ms). */
export interface RolloutTimings {
  readonly totalMs: number;
  /** Every step that is not a denoise step (wan21: the text encode). */
  readonly encodeMs: number;
  readonly denoiseMs: number;
  /** Capture cost (graph/session specialisation) paid by this rollout. */
  readonly captureMs: number;
  /** Wall time of each denoise step, in order. */
  readonly stepMs: readonly number[];
}

/**
 * One rollout group's trajectory and everything a trainer needs to recompute it
 * (DESIGN.md §4). Array layouts are row-major.
 */
export interface RolloutResult {
  readonly model: string;
  readonly loopId: string;
  readonly prompt: string;
  readonly negativePrompt: string;
  readonly sampler: Sampler;
  /** Denoise steps T. */
  readonly steps: number;
  /** Samples G. */
  readonly group: number;
  /** One sample's latent dims; the rank is the card's (wan21: [C, F, H, W]). */
  readonly latentDims: readonly number[];
  readonly seeds: readonly number[];
  readonly noiseLevel: number;
  readonly guidanceScale: number;
  /** Shift of the linear-shift schedule; null when the request carried explicit sigmas. */
  readonly shift: number | null;
  /** x_0..x_T: [T + 1, G, ...latentDims] float32. */
  readonly latents: Float32Array;
  /** Per-step, per-sample log-probs [T, G] float64 (0 for the ODE sampler). */
  readonly logProbs: Float64Array;
  /** σ_0..σ_T [T + 1] float64. */
  readonly sigmas: Float64Array;
  /** t_i = 1000·σ_i [T] float64 (the forward gets them rounded to float32). */
  readonly timesteps: Float64Array;
  /** Step index of each row of logProbs [T]. */
  readonly stepIndices: Int32Array;
  /** The weight version of every component the rollout ran on. */
  readonly weightsVersions: Readonly<Record<string, number>>;
  /** The backend that built each component (`ort-cpu`, `cpu-reference`, …). */
  readonly backend: Readonly<Record<string, string>>;
  readonly platform: { readonly device: string; readonly arch: string };
  /** Names of the interceptors that were installed. */
  readonly interceptors: readonly string[];
  /** This rollout's captures, replays and eager-breaks (liveGraphs/bytesHeld: 0). */
  readonly captureStats: CaptureStats;
  readonly timings: RolloutTimings;
}
