import { FlowfleetError } from '@flowfleet/errors';
import type { ModelCard } from '@flowfleet/models';
import { linearShiftSigmas } from '@flowfleet/numerics';
import type { StepInterceptor, StepObserver } from '../step-hooks.js';

/** ODE (Euler, deterministic) or FlowGRPO SDE (stochastic, with log-probs). */
export type Sampler = 'ode' | 'sde';

/** Latent size in latent units (frames F, height H, width W). */
export interface LatentSize {
  readonly frames: number;
  readonly height: number;
  readonly width: number;
}

/** One rollout group: G samples of one prompt, each with its own seed. */
export interface RolloutRequest {
  readonly prompt: string;
  /** The unconditional prompt of CFG (default: empty). */
  readonly negativePrompt?: string;
  /** One seed per sample (integers in [0, 2^53)); G = seeds.length. */
  readonly seeds: readonly number[];
  /** Denoise steps T (default: the card's). Ignored when `sigmas` is given. */
  readonly steps?: number;
  /** Shift of the linear-shift schedule (default: the card's). */
  readonly shift?: number;
  /** An explicit sigma table of length T + 1: σ_0 ≤ 1, strictly decreasing, σ_T ≥ 0. */
  readonly sigmas?: readonly number[];
  readonly sampler?: Sampler;
  /** FlowGRPO noise level a (default: the card's). */
  readonly noiseLevel?: number;
  /** CFG scale w; 1 runs no unconditional branch (default: the card's). */
  readonly guidanceScale?: number;
  readonly shape?: LatentSize;
  /** `off` runs every step eagerly (no capture, no eager-break counting). Default `auto`. */
  readonly graphCapture?: 'auto' | 'off';
  /** Per-request interceptors (at most one distribution-altering). */
  readonly interceptors?: readonly StepInterceptor[];
  readonly observers?: readonly StepObserver[];
  /** Cancels at the next step boundary. */
  readonly signal?: AbortSignal;
}

/** A request with every default filled in and checked. */
export interface ResolvedRolloutRequest {
  readonly prompt: string;
  readonly negativePrompt: string;
  readonly seeds: readonly number[];
  readonly steps: number;
  /** null when the request carried an explicit sigma table. */
  readonly shift: number | null;
  readonly sigmas: Float64Array;
  readonly sampler: Sampler;
  readonly noiseLevel: number;
  readonly guidanceScale: number;
  readonly shape: LatentSize;
}

function invalid(field: string, message: string, value: unknown): FlowfleetError {
  return new FlowfleetError('RT_INVALID_REQUEST', `${field}: ${message}`, {
    details: { field, value: typeof value === 'number' ? value : String(value) },
  });
}

function positiveInt(field: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw invalid(field, 'expected an integer ≥ 1', value);
  return value;
}

function finite(field: string, value: number, min: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
    throw invalid(field, `expected a finite number ≥ ${min}`, value);
  }
  return value;
}

function checkSigmas(table: readonly number[]): Float64Array {
  if (table.length < 2) throw invalid('sigmas', 'expected at least 2 entries', table.length);
  const sigmas = Float64Array.from(table);
  if (!(sigmas[0]! <= 1 && sigmas[0]! > 0))
    throw invalid('sigmas', 'σ_0 must be in (0, 1]', sigmas[0]);
  for (let i = 1; i < sigmas.length; i++) {
    if (!(sigmas[i]! < sigmas[i - 1]! && sigmas[i]! >= 0)) {
      throw invalid('sigmas', `must be strictly decreasing and ≥ 0 (index ${i})`, sigmas[i]);
    }
  }
  return sigmas;
}

/**
 * Fills a request's defaults from the card and checks it.
 * @throws FlowfleetError RT_INVALID_REQUEST naming the field
 */
export function resolveRolloutRequest(
  card: ModelCard,
  request: RolloutRequest,
): ResolvedRolloutRequest {
  const defaults = card.sampling;
  if (typeof request.prompt !== 'string')
    throw invalid('prompt', 'expected a string', request.prompt);
  if (request.seeds.length === 0) throw invalid('seeds', 'expected at least one seed', 0);
  for (const seed of request.seeds) {
    if (!Number.isSafeInteger(seed) || seed < 0) {
      throw invalid('seeds', 'each seed must be an integer in [0, 2^53)', seed);
    }
  }
  const sampler = request.sampler ?? defaults.sampler;
  if (sampler !== 'ode' && sampler !== 'sde')
    throw invalid('sampler', "expected 'ode' or 'sde'", sampler);
  let sigmas: Float64Array;
  let shift: number | null = null;
  if (request.sigmas !== undefined) sigmas = checkSigmas(request.sigmas);
  else {
    shift = finite('shift', request.shift ?? defaults.shift, Number.MIN_VALUE);
    sigmas = linearShiftSigmas(positiveInt('steps', request.steps ?? defaults.steps), shift);
  }
  if (sampler === 'sde' && sigmas.length > 2 && !(sigmas[1]! < 1)) {
    throw invalid('sigmas', 'σ_1 must be below 1 for the SDE sampler', sigmas[1]);
  }
  const latent = request.shape ?? card.latent;
  const [, ph, pw] = card.config.patch;
  positiveInt('shape.frames', latent.frames);
  if (positiveInt('shape.height', latent.height) % ph !== 0) {
    throw invalid('shape.height', `must be a multiple of the patch height ${ph}`, latent.height);
  }
  if (positiveInt('shape.width', latent.width) % pw !== 0) {
    throw invalid('shape.width', `must be a multiple of the patch width ${pw}`, latent.width);
  }
  const noiseLevel = finite('noiseLevel', request.noiseLevel ?? defaults.noiseLevel, 0);
  if (sampler === 'sde' && noiseLevel === 0) {
    throw invalid('noiseLevel', 'the SDE sampler needs a noise level > 0', noiseLevel);
  }
  return {
    prompt: request.prompt,
    negativePrompt: request.negativePrompt ?? '',
    seeds: [...request.seeds],
    steps: sigmas.length - 1,
    shift,
    sigmas,
    sampler,
    noiseLevel,
    guidanceScale: finite('guidanceScale', request.guidanceScale ?? defaults.guidanceScale, 0),
    shape: { frames: latent.frames, height: latent.height, width: latent.width },
  };
}
