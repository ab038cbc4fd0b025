/** ODE (Euler, deterministic) or FlowGRPO SDE (stochastic, with log-probs). */
export type Sampler = 'ode' | 'sde';

import { CfgRuleSchema, type CfgRule } from '@flowfleet/formats';
import type { FrameSelection, LatentKeep } from './rollout-outputs.js';

export type { CfgRule };

/**
 * The CFG rules by name (RolloutFile v1 records them; formats owns the names): `unless-one` — the
 * unconditional branch runs for every scale w ≠ 1 (flowfleet's rule since its first release, and
 * the default); `above-one` — only for w > 1 (diffusers' and flow_grpo's `guidance_scale > 1`), so
 * a scale in [0, 1] runs the conditional branch alone.
 */
export const CFG_RULES: readonly CfgRule[] = CfgRuleSchema.options;

/** Whether CFG runs its unconditional branch for scale `w` under `rule`. */
export function runsUnconditionalBranch(rule: CfgRule, w: number): boolean {
  return rule === 'above-one' ? w > 1 : w !== 1;
}

/** Latent size in latent units (frames F, height H, width W). */
export interface LatentSize {
  readonly frames: number;
  readonly height: number;
  readonly width: number;
}

/**
 * A text embedding by reference: the sha256 of an uploaded safetensors blob holding one tensor
 * `[L, textDim]` (F32, BF16 or F16), L ≤ the card's text length = the prompt's true token count.
 */
export interface TextEmbedsRef {
  readonly sha256: string;
}

/**
 * What a card whose text input is embeddings takes (present on such a card, absent on a card that
 * encodes prompts itself): the embedding width and the most rows one may have.
 */
export interface TextEmbeddingSpec {
  /** Columns of an embedding (umT5-XXL: 4096). */
  readonly dim: number;
  /** The most rows (tokens) one may have; the card zero-pads to exactly this many. */
  readonly maxTokens: number;
}

/** One prompt's embedding as a rollout consumes it: `[tokens, dim]` float32, finite, unpadded. */
export interface TextEmbedding {
  readonly tokens: number;
  readonly dim: number;
  readonly data: Float32Array;
}

/** The loaded embeddings of one rollout: the prompt's, and the negative prompt's when CFG runs. */
export interface TextEmbeddings {
  readonly prompt: TextEmbedding;
  readonly negativePrompt?: TextEmbedding | undefined;
}

/** Sampler defaults a request may override. */
export interface SamplingDefaults {
  readonly steps: number;
  /** Shift of the linear-shift sigma schedule. */
  readonly shift: number;
  readonly guidanceScale: number;
  /** FlowGRPO noise level a. */
  readonly noiseLevel: number;
  readonly sampler: Sampler;
}

/**
 * One rollout group as a caller asks for it: G samples of one prompt, each with its own seed.
 * Structural on purpose: protocol's parsed RolloutRequest is one (this package may not import
 * protocol), and so is the runtime's.
 */
export interface SamplingRequest {
  readonly prompt: string;
  /** The unconditional prompt of CFG (default: empty). */
  readonly negativePrompt?: string | undefined;
  /** The prompt's embedding (required by, and only by, a card whose text input is embeddings). */
  readonly promptEmbeds?: TextEmbedsRef | undefined;
  /** The negative prompt's embedding (required by such a card when CFG runs). */
  readonly negativePromptEmbeds?: TextEmbedsRef | undefined;
  /** One seed per sample (integers in [0, 2^53)); G = seeds.length. */
  readonly seeds: readonly number[];
  /** Denoise steps T (default: the card's). Ignored when `sigmas` is given. */
  readonly steps?: number | undefined;
  /** Shift of the linear-shift schedule (default: the card's). Ignored when `sigmas` is given. */
  readonly shift?: number | undefined;
  /** An explicit sigma table of length T + 1: σ_0 ≤ 1, strictly decreasing, σ_T ≥ 0. */
  readonly sigmas?: readonly number[] | undefined;
  readonly sampler?: Sampler | undefined;
  /** FlowGRPO noise level a (default: the card's). */
  readonly noiseLevel?: number | undefined;
  /** CFG scale w (default: the card's); whether it runs an unconditional branch is `cfgRule`'s. */
  readonly guidanceScale?: number | undefined;
  /** When CFG runs its unconditional branch (default `unless-one`). */
  readonly cfgRule?: CfgRule | undefined;
  readonly shape?: LatentSize | undefined;
  /** Which decoded frames come back (default `none`; anything else needs a card with a decoder). */
  readonly decodeFrames?: FrameSelection | undefined;
  /** Which trajectory latents come back (default `all`). */
  readonly keepLatents?: LatentKeep | undefined;
}

/** A request with every default filled in and checked against its card's rules. */
export interface ResolvedSamplingRequest {
  readonly prompt: string;
  readonly negativePrompt: string;
  readonly promptEmbeds?: TextEmbedsRef | undefined;
  readonly negativePromptEmbeds?: TextEmbedsRef | undefined;
  readonly seeds: readonly number[];
  readonly steps: number;
  /** null when the request carried an explicit sigma table. */
  readonly shift: number | null;
  /** σ_0..σ_T, float64. */
  readonly sigmas: Float64Array;
  readonly sampler: Sampler;
  readonly noiseLevel: number;
  readonly guidanceScale: number;
  readonly cfgRule: CfgRule;
  /** True when the rollout runs CFG's unconditional branch (`runsUnconditionalBranch`). */
  readonly cfg: boolean;
  readonly shape: LatentSize;
  readonly decodeFrames: FrameSelection;
  readonly keepLatents: LatentKeep;
}
