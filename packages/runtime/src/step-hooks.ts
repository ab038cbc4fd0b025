import { FlowfleetError } from '@flowfleet/errors';
import type { ExecutionMode } from './capture-stats.js';
import type { StepInfo, StepOverride, StepResult } from '@flowfleet/models';

/**
 * Hooks a step: `before` may supply an override (a cached velocity that replaces the forward
 * only), `after` sees the result. Interceptors are per request: keep their state on the instance
 * you pass to one rollout, never in module globals.
 */
export interface StepInterceptor {
  readonly name: string;
  /** True when an override it supplies can change the sampled distribution. */
  readonly altersDistribution: boolean;
  /** Returns an override, or `current` (the override of an earlier interceptor) to keep it. */
  before?(step: StepInfo, current: StepOverride | undefined): StepOverride | undefined;
  after?(step: StepInfo, result: StepResult): void;
}

/** Watches results without changing them (a throw fails the rollout). */
export interface StepObserver {
  readonly name: string;
  onStep(step: StepInfo, result: StepResult, mode: ExecutionMode): void;
}

/**
 * Rejects, before any compute, a chain with more than one distribution-altering interceptor:
 * two of them would compose into a distribution neither was validated for.
 * @throws FlowfleetError RT_INTERCEPTOR_CONFLICT naming them
 */
export function checkInterceptors(interceptors: readonly StepInterceptor[]): void {
  const altering = interceptors.filter((i) => i.altersDistribution).map((i) => i.name);
  if (altering.length > 1) {
    throw new FlowfleetError(
      'RT_INTERCEPTOR_CONFLICT',
      `only one distribution-altering interceptor per rollout; got ${altering.join(', ')}`,
      { details: { interceptors: altering } },
    );
  }
}
