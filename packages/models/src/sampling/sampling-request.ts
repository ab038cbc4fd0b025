/** ODE (Euler, deterministic) or FlowGRPO SDE (stochastic, with log-probs). */
export type Sampler = 'ode' | 'sde';

import { CfgRuleSchema, type CfgRule } from '@flowfleet/formats';

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
}

/** A request with every default filled in and checked against its card's rules. */
export interface ResolvedSamplingRequest {
  readonly prompt: string;
  readonly negativePrompt: string;
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
}
