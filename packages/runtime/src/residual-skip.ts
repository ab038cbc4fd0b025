import type { StepInfo, StepOverride, StepResult } from '@flowfleet/models';
import type { StepInterceptor } from './step-hooks.js';

/** Options of the ResidualSkip interceptor. */
export interface ResidualSkipOptions {
  /** Denoise step indices whose forward is skipped (the previous step's velocity is reused). */
  readonly skipSteps: readonly number[];
  /** The step kind it acts on (default `denoise`). */
  readonly kind?: string;
}

/** The ResidualSkip interceptor, with what it did. */
export interface ResidualSkip extends StepInterceptor {
  /** Steps where it supplied an override. */
  readonly skipped: readonly number[];
}

/**
 * The reference ResidualSkip interceptor (a TeaCache-style velocity cache): on the listed steps it
 * replaces the forward with the velocity the previous step computed; the solver still runs. It
 * alters the distribution, so it cannot be combined with another altering interceptor.
 */
export function createResidualSkip(options: ResidualSkipOptions): ResidualSkip {
  const kind = options.kind ?? 'denoise';
  const skip = new Set(options.skipSteps);
  const skipped: number[] = [];
  let cached: { index: number; velocity: Float32Array } | undefined;
  return {
    name: 'residual-skip',
    altersDistribution: true,
    skipped,
    before(step: StepInfo, current: StepOverride | undefined): StepOverride | undefined {
      if (current !== undefined || step.kind !== kind || !skip.has(step.index)) return current;
      if (cached === undefined || cached.index !== step.index - 1) return undefined;
      skipped.push(step.index);
      return { velocity: cached.velocity, source: 'residual-skip' };
    },
    after(step: StepInfo, result: StepResult): void {
      if (step.kind !== kind) return;
      const velocity = result.tensors['velocity'];
      if (velocity instanceof Float32Array) cached = { index: step.index, velocity };
    },
  };
}
