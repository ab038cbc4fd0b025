import { CaptureCounters, type CaptureStats, type ExecutionMode } from './capture-stats.js';
import type { GraphCapturer } from './graph-capturer.js';
import type { StepInfo, StepInstance, StepOverride, StepResult, WorkPlan } from '@flowfleet/models';
import { checkInterceptors, type StepInterceptor, type StepObserver } from './step-hooks.js';

/** Options of a RuntimeLoopContext (one per request). */
export interface RuntimeLoopContextOptions {
  readonly loopId: string;
  readonly capturer: GraphCapturer;
  /** The request's view of its ModelInstance (pinned weights). */
  readonly instance: StepInstance;
  /** `breakable` lets steps be captured; `eager` runs every step eagerly (the loop spec's say). */
  readonly graphCapture: 'eager' | 'breakable';
  readonly interceptors?: readonly StepInterceptor[];
  readonly observers?: readonly StepObserver[];
}

/** One executed step, for timings. */
export interface StepRecord {
  readonly kind: string;
  readonly index: number;
  readonly mode: ExecutionMode;
  readonly ms: number;
  readonly captureMs: number;
}

/**
 * The one place the runtime decides how a step runs (DESIGN.md §3): interceptors may supply an
 * override that replaces the forward only; then the step runs eagerly (capture off) or through
 * the GraphCapturer (capture, replay, or a counted eager-break); observers and interceptors then
 * see the result.
 */
export class RuntimeLoopContext {
  readonly loopId: string;
  readonly #options: RuntimeLoopContextOptions;
  readonly #interceptors: readonly StepInterceptor[];
  readonly #observers: readonly StepObserver[];
  readonly #counters = new CaptureCounters();
  readonly #steps: StepRecord[] = [];

  /** @throws FlowfleetError RT_INTERCEPTOR_CONFLICT (before any step runs) */
  constructor(options: RuntimeLoopContextOptions) {
    this.loopId = options.loopId;
    this.#options = options;
    this.#interceptors = options.interceptors ?? [];
    this.#observers = options.observers ?? [];
    checkInterceptors(this.#interceptors);
  }

  /** Runs one planned step and returns its result. */
  async execute<R extends StepResult>(plan: WorkPlan<R>): Promise<R> {
    const step = plan.step;
    const override = this.#override(step);
    const started = performance.now();
    let result: R;
    let mode: ExecutionMode;
    let captureMs = 0;
    if (this.#options.graphCapture === 'eager') {
      result = await plan.run(this.#options.instance, override);
      mode = 'eager';
      this.#counters.count('eager');
    } else {
      const outcome = await this.#options.capturer.dispatch(
        this.loopId,
        plan,
        this.#options.instance,
        override,
      );
      result = outcome.result;
      mode = outcome.mode;
      if (outcome.mode === 'capture') captureMs = outcome.captureMs;
      this.#counters.count(
        outcome.mode,
        outcome.mode === 'eager-break' ? outcome.reason : undefined,
        captureMs,
      );
    }
    this.#steps.push({
      kind: step.kind,
      index: step.index,
      mode,
      ms: performance.now() - started,
      captureMs,
    });
    for (const observer of this.#observers) observer.onStep(step, result, mode);
    for (const interceptor of this.#interceptors) interceptor.after?.(step, result);
    return result;
  }

  /** This request's capture counters (graphs are the instance's: liveGraphs/bytesHeld are 0). */
  stats(): CaptureStats {
    return this.#counters.snapshot(0, 0);
  }

  /** Every step run so far, in order. */
  steps(): readonly StepRecord[] {
    return this.#steps;
  }

  /** Names of the installed interceptors. */
  interceptorNames(): readonly string[] {
    return this.#interceptors.map((i) => i.name);
  }

  #override(step: StepInfo): StepOverride | undefined {
    let override: StepOverride | undefined;
    for (const interceptor of this.#interceptors) {
      if (interceptor.before !== undefined) override = interceptor.before(step, override);
    }
    return override;
  }
}
