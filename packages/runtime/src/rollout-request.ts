import type { SamplingRequest, TextEmbeddings } from '@flowfleet/models';
import type { StepInterceptor, StepObserver } from './step-hooks.js';

/**
 * One rollout group as the runtime takes it: the sampling request its card's rules resolve
 * (defaults from the card), plus how this process runs it.
 */
export interface RolloutRequest extends SamplingRequest {
  /** `off` runs every step eagerly (no capture, no eager-break counting). Default `auto`. */
  readonly graphCapture?: 'auto' | 'off';
  /** Per-request interceptors (at most one distribution-altering). */
  readonly interceptors?: readonly StepInterceptor[];
  readonly observers?: readonly StepObserver[];
  /**
   * The loaded embeddings `promptEmbeds` / `negativePromptEmbeds` name (a card whose text input is
   * embeddings needs them; the caller fetched and checked them, the card's loop pads them).
   */
  readonly textEmbeddings?: TextEmbeddings;
  /** Cancels at the next step boundary. */
  readonly signal?: AbortSignal;
}
