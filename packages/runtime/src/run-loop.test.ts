import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { GraphCapturer } from './graph-capturer.js';
import { DONE, type DrivenLoop, type StepInstance, type StepResult } from '@flowfleet/models';
import { runLoop } from './run-loop.js';
import { RuntimeLoopContext } from './runtime-loop-context.js';

// A counting loop: step i adds i + 1 to a running total held in the loop state.
interface CountState {
  readonly steps: number;
  done: number;
  total: number;
}

const countLoop: DrivenLoop<number, CountState, StepResult, number> = {
  loopId: 'count',
  init: (steps) => ({ steps, done: 0, total: 0 }),
  next(state) {
    if (state.done >= state.steps) return DONE;
    const i = state.done;
    const value = Float64Array.of(i + 1);
    return {
      step: { loopId: 'count', kind: 'add', index: i },
      components: [],
      shapeSig: { kind: 'add', dims: { v: [1] }, dtype: 'float64' },
      capturable: true,
      graphKey: {},
      workspaceBytes: 8,
      run: async (_instance, override) => ({
        tensors: { v: override ? Float64Array.from(override.velocity) : value.slice() },
      }),
      graphFn: async (_instance, ws) => ({
        tensors: { v: (ws.input('v').data as Float64Array).slice() },
      }),
      graphInputs: { v: { dtype: 'float64', dims: [1], data: value } },
    };
  },
  advance(state, result) {
    state.total += result.tensors['v']![0]!;
    state.done++;
  },
  finalize: (state) => state.total,
};

const instance: StepInstance = {
  kernels: { get: () => undefined as never },
  component: () => {
    throw new Error('no components');
  },
  weights: () => {
    throw new Error('no weights');
  },
  versions: {},
};

function context(
  graphCapture: 'eager' | 'breakable',
  capturer = new GraphCapturer({ device: 'cpu', arch: 'generic' }),
) {
  return new RuntimeLoopContext({ loopId: 'count', capturer, instance, graphCapture });
}

describe('runLoop and RuntimeLoopContext', () => {
  it('drives init → next/execute/advance → finalize, capturing once and replaying', async () => {
    const ctx = context('breakable');
    expect(await runLoop(countLoop, 4, instance, ctx)).toBe(1 + 2 + 3 + 4);
    expect(ctx.stats()).toMatchObject({ captures: 1, replays: 3, eagerBreaks: 0 });
    expect(ctx.steps().map((s) => s.mode)).toEqual(['capture', 'replay', 'replay', 'replay']);
  });

  it('runs every step eagerly, uncounted as breaks, when the loop is eager', async () => {
    const ctx = context('eager');
    expect(await runLoop(countLoop, 3, instance, ctx)).toBe(6);
    expect(ctx.stats()).toMatchObject({ captures: 0, eagerBreaks: 0, eagerSteps: 3 });
  });

  it('routes an interceptor override to the step as an eager-break', async () => {
    const ctx = new RuntimeLoopContext({
      loopId: 'count',
      capturer: new GraphCapturer({ device: 'cpu', arch: 'generic' }),
      instance,
      graphCapture: 'breakable',
      interceptors: [
        {
          name: 'tens',
          altersDistribution: true,
          before: (step, current) =>
            step.index === 1 ? { velocity: Float32Array.of(10), source: 'tens' } : current,
        },
      ],
    });
    expect(await runLoop(countLoop, 3, instance, ctx)).toBe(1 + 10 + 3);
    expect(ctx.stats().eagerBreakReasons.override).toBe(1);
  });

  it('stops at a step boundary when the signal aborts', async () => {
    const controller = new AbortController();
    const ctx = new RuntimeLoopContext({
      loopId: 'count',
      capturer: new GraphCapturer({ device: 'cpu', arch: 'generic' }),
      instance,
      graphCapture: 'breakable',
      observers: [
        { name: 'stop', onStep: (step) => void (step.index === 1 && controller.abort()) },
      ],
    });
    let error: unknown;
    await runLoop(countLoop, 5, instance, ctx, { signal: controller.signal }).catch(
      (e: unknown) => (error = e),
    );
    expect(isFlowfleetError(error, 'RT_CANCELLED')).toBe(true);
    expect(ctx.steps()).toHaveLength(2);
  });
});
