import type { ComponentForward, ComponentSpec } from '@flowfleet/platform';
import type { Wan21Config } from '../wan21-config.js';

/** One driven loop of a card (DESIGN.md §3). */
export interface LoopSpec {
  readonly loopId: string;
  /** `breakable`: capturable, with eager breaks where a step cannot be captured. */
  readonly graphCapture: 'eager' | 'breakable';
  /** Components whose resident weight version is part of a captured graph's key. */
  readonly sharedWeightComponents: readonly string[];
}

/** Sampler defaults a request may override. */
export interface SamplingDefaults {
  readonly steps: number;
  /** Shift of the linear-shift sigma schedule. */
  readonly shift: number;
  readonly guidanceScale: number;
  /** FlowGRPO noise level a. */
  readonly noiseLevel: number;
  readonly sampler: 'sde' | 'ode';
}

/** Default latent size (frames F, height H, width W, in latent units). */
export interface LatentDefaults {
  readonly frames: number;
  readonly height: number;
  readonly width: number;
}

/** A card component: a platform ComponentSpec whose TS-reference factory builds a forward. */
export interface ModelComponentSpec extends ComponentSpec<unknown, ComponentForward> {
  readonly kind: 'dit' | 'text_encoder';
  /** Filled by the backend helpers (e.g. `buildOnnx`); a plain object so builders can look up keys. */
  readonly artifacts: Readonly<Record<string, unknown>>;
}

/** Everything the runtime needs to know about one model. */
export interface ModelCard {
  readonly id: string;
  readonly config: Wan21Config;
  readonly components: readonly ModelComponentSpec[];
  readonly loops: readonly LoopSpec[];
  readonly sampling: SamplingDefaults;
  readonly latent: LatentDefaults;
}
