import { isFlowfleetError } from '@flowfleet/errors';
import type {
  CapturedForward,
  ComponentForward,
  TensorData,
  TensorMap,
  WeightSet,
} from '@flowfleet/platform';
import { describe, expect, it } from 'vitest';
import { GraphCapturer } from './graph-capturer.js';
import type { StepInstance, StepOverride, StepResult, WorkPlan } from '@flowfleet/models';

// A toy component y = w·x (w from the weight set); its capture bakes w in and counts disposals.
interface ToyComponent extends ComponentForward {
  readonly captured: { weights: string; disposed: boolean }[];
}

function toyComponent(id: string): ToyComponent {
  const captured: { weights: string; disposed: boolean }[] = [];
  const scale = (inputs: TensorMap, w: number): Record<string, TensorData> => {
    const x = inputs['x']!.data as Float32Array;
    return { y: { dtype: 'float32', dims: inputs['x']!.dims, data: x.map((v) => v * w) } };
  };
  return {
    kind: id,
    source: 'toy',
    captured,
    async run(inputs, weights) {
      return scale(inputs, (weights.tensors.get('w')!.data as Float32Array)[0]!);
    },
    async capture(weights): Promise<CapturedForward> {
      const record = { weights: weights.id, disposed: false };
      captured.push(record);
      const w = (weights.tensors.get('w')!.data as Float32Array)[0]!;
      return {
        run: async (inputs) => scale(inputs, w),
        bytesHeld: 4,
        dispose: async () => {
          record.disposed = true;
        },
      };
    },
    async dispose() {},
  };
}

function weightSet(id: string, w: number): WeightSet {
  return {
    id,
    tensors: new Map([['w', { dtype: 'float32', dims: [1], data: Float32Array.of(w) }]]),
  };
}

function toyInstance(versions: Record<string, number> = { a: 1, b: 1 }): StepInstance & {
  components: { a: ToyComponent; b: ToyComponent };
} {
  const components = { a: toyComponent('a'), b: toyComponent('b') };
  return {
    components,
    kernels: { get: <F>() => ((x: number) => x) as F },
    component: (id) => components[id as 'a' | 'b'],
    weights: (id) => weightSet(`${id}@${versions[id]}`, versions[id]! + 1),
    versions,
  };
}

interface ToyPlanOptions {
  readonly component?: string;
  readonly length?: number;
  readonly dimsOverride?: number[];
  readonly key?: Record<string, string>;
  readonly workspaceBytes?: number;
  readonly capturable?: boolean;
  readonly graphFn?: boolean;
  readonly x?: Float32Array;
  readonly seen?: (StepOverride | undefined)[];
}

function toyPlan(options: ToyPlanOptions = {}): WorkPlan<StepResult> {
  const component = options.component ?? 'a';
  const length = options.length ?? 4;
  const x = options.x ?? Float32Array.from({ length }, (_, i) => i + 1);
  const dims = options.dimsOverride ?? [length];
  const plan: WorkPlan<StepResult> = {
    step: { loopId: 'toy', kind: 'toy', index: 0 },
    components: [component],
    shapeSig: { kind: 'toy', dims: { x: [length] }, dtype: 'float32' },
    capturable: options.capturable ?? true,
    graphKey: options.key ?? { cfg: 'cond' },
    workspaceBytes: options.workspaceBytes ?? 4 * length,
    async run(instance, override) {
      options.seen?.push(override);
      if (override !== undefined) return { tensors: { y: override.velocity.slice() } };
      const out = await instance
        .component(component)
        .run({ x: { dtype: 'float32', dims, data: x } }, instance.weights(component));
      return { tensors: { y: (out['y']!.data as Float32Array).slice() } };
    },
    graphInputs: { x: { dtype: 'float32', dims, data: x } },
    graphComponents: { [component]: { x: dims } },
  };
  if (options.graphFn === false) return plan;
  return {
    ...plan,
    async graphFn(_instance, workspace) {
      const input = workspace.input('x');
      const out = await workspace
        .forward(component)
        .run({ x: { dtype: 'float32', dims: input.dims, data: input.data as Float32Array } });
      const scratch = workspace.scratchF32('y', length);
      scratch.set(out['y']!.data as Float32Array);
      return { tensors: { y: scratch.slice() } };
    },
  };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return isFlowfleetError(error) ? error.code : `not coded: ${String(error)}`;
  }
  return 'no error';
}

describe('GraphCapturer', () => {
  it('captures once for a constant shape and replays N−1 times', async () => {
    const capturer = new GraphCapturer({ device: 'cpu', arch: 'generic' });
    const instance = toyInstance();
    const modes: string[] = [];
    for (let i = 0; i < 5; i++)
      modes.push((await capturer.dispatch('toy', toyPlan(), instance)).mode);
    expect(modes).toEqual(['capture', 'replay', 'replay', 'replay', 'replay']);
    expect(capturer.stats()).toMatchObject({
      captures: 1,
      replays: 4,
      eagerBreaks: 0,
      liveGraphs: 1,
    });
    expect(instance.components.a.captured).toHaveLength(1);
  });

  it('gives the same values captured and eager, and replays the current inputs', async () => {
    const capturer = new GraphCapturer({ device: 'cpu', arch: 'generic' });
    const instance = toyInstance();
    const first = Float32Array.of(1, 2, 3, 4);
    const second = Float32Array.of(-5, 0.5, 7, 9);
    await capturer.dispatch('toy', toyPlan({ x: first }), instance);
    const replay = await capturer.dispatch('toy', toyPlan({ x: second }), instance);
    const eager = await toyPlan({ x: second }).run(instance);
    expect(replay.mode).toBe('replay');
    expect(replay.result.tensors['y']).toEqual(eager.tensors['y']);
    expect(Array.from(replay.result.tensors['y']!)).toEqual([-10, 1, 14, 18]);
  });

  it('captures a new graph for a new shape and for a different graphKey', async () => {
    const capturer = new GraphCapturer({ device: 'cpu', arch: 'generic' });
    const instance = toyInstance();
    expect((await capturer.dispatch('toy', toyPlan(), instance)).mode).toBe('capture');
    expect((await capturer.dispatch('toy', toyPlan({ length: 8 }), instance)).mode).toBe('capture');
    expect(
      (await capturer.dispatch('toy', toyPlan({ key: { cfg: 'uncond+cond' } }), instance)).mode,
    ).toBe('capture');
    expect((await capturer.dispatch('toy', toyPlan({ length: 8 }), instance)).mode).toBe('replay');
    const keys = capturer.graphs().map((g) => g.parts);
    expect(keys).toHaveLength(3);
    expect(new Set(capturer.graphs().map((g) => g.key)).size).toBe(3);
  });

  it('eager-breaks on an override and hands the override to the step', async () => {
    const capturer = new GraphCapturer({ device: 'cpu', arch: 'generic' });
    const instance = toyInstance();
    const seen: (StepOverride | undefined)[] = [];
    const velocity = Float32Array.of(9, 8, 7, 6);
    const outcome = await capturer.dispatch('toy', toyPlan({ seen }), instance, {
      velocity,
      source: 'test',
    });
    expect(outcome).toMatchObject({ mode: 'eager-break', reason: 'override' });
    expect(seen[0]?.velocity).toBe(velocity);
    expect(Array.from(outcome.result.tensors['y']!)).toEqual([9, 8, 7, 6]);
    expect(capturer.stats()).toMatchObject({ captures: 0, eagerBreaks: 1, liveGraphs: 0 });
  });

  it('eager-breaks on a non-capturable plan and on a plan without graphFn', async () => {
    const capturer = new GraphCapturer({ device: 'cpu', arch: 'generic' });
    const instance = toyInstance();
    const a = await capturer.dispatch('toy', toyPlan({ capturable: false }), instance);
    const b = await capturer.dispatch('toy', toyPlan({ graphFn: false }), instance);
    expect(a).toMatchObject({ mode: 'eager-break', reason: 'not-capturable' });
    expect(b).toMatchObject({ mode: 'eager-break', reason: 'no-graph-fn' });
    expect(capturer.stats().eagerBreakReasons).toEqual({
      'not-capturable': 1,
      override: 0,
      'no-graph-fn': 1,
    });
    expect(Array.from(a.result.tensors['y']!)).toEqual([2, 4, 6, 8]);
  });

  it('throws RT_GRAPH_KEY_COLLISION for the same key with another workspace size', async () => {
    const capturer = new GraphCapturer({ device: 'cpu', arch: 'generic' });
    const instance = toyInstance();
    await capturer.dispatch('toy', toyPlan(), instance);
    expect(await codeOf(capturer.dispatch('toy', toyPlan({ workspaceBytes: 64 }), instance))).toBe(
      'RT_GRAPH_KEY_COLLISION',
    );
  });

  it('throws RT_GRAPH_BIND_MISMATCH when a replay binds a wrong shape', async () => {
    const capturer = new GraphCapturer({ device: 'cpu', arch: 'generic' });
    const instance = toyInstance();
    await capturer.dispatch('toy', toyPlan(), instance);
    // Same shapeSig (a keying bug in the plan) but the input really is [2, 2].
    const wrong = toyPlan({ dimsOverride: [2, 2] });
    expect(await codeOf(capturer.dispatch('toy', wrong, instance))).toBe('RT_GRAPH_BIND_MISMATCH');
  });

  it('invalidates exactly the graphs naming a component and disposes them', async () => {
    const capturer = new GraphCapturer({ device: 'cpu', arch: 'generic' });
    const instance = toyInstance();
    await capturer.dispatch('toy', toyPlan({ component: 'a' }), instance);
    await capturer.dispatch('toy', toyPlan({ component: 'b' }), instance);
    expect(await capturer.invalidate(['a'])).toBe(1);
    expect(instance.components.a.captured.map((c) => c.disposed)).toEqual([true]);
    expect(instance.components.b.captured.map((c) => c.disposed)).toEqual([false]);
    expect(capturer.graphs().map((g) => g.components)).toEqual([['b']]);
    expect((await capturer.dispatch('toy', toyPlan({ component: 'a' }), instance)).mode).toBe(
      'capture',
    );
    expect(capturer.stats()).toMatchObject({ evictions: 1, captures: 3, liveGraphs: 2 });
  });

  it('keys graphs by the pinned weight version and evicts one version', async () => {
    const capturer = new GraphCapturer({ device: 'cpu', arch: 'generic' });
    const v1 = toyInstance({ a: 1, b: 1 });
    const v2 = toyInstance({ a: 2, b: 1 });
    await capturer.dispatch('toy', toyPlan(), v1);
    const r2 = await capturer.dispatch('toy', toyPlan(), v2);
    expect(r2.mode).toBe('capture');
    expect(Array.from(r2.result.tensors['y']!)).toEqual([3, 6, 9, 12]);
    expect(await capturer.invalidateVersion('a', 1)).toBe(1);
    expect(capturer.graphs().map((g) => g.parts.weights)).toEqual([{ a: 2 }]);
  });

  it('serialises concurrent replays of one graph so inputs never mix', async () => {
    const capturer = new GraphCapturer({ device: 'cpu', arch: 'generic' });
    const instance = toyInstance();
    await capturer.dispatch('toy', toyPlan(), instance);
    const inputs = Array.from({ length: 6 }, (_, k) =>
      Float32Array.from({ length: 4 }, (_, i) => 10 * k + i),
    );
    const outcomes = await Promise.all(
      inputs.map((x) => capturer.dispatch('toy', toyPlan({ x }), instance)),
    );
    outcomes.forEach((o, k) =>
      expect(Array.from(o.result.tensors['y']!)).toEqual(Array.from(inputs[k]!, (v) => 2 * v)),
    );
    expect(capturer.stats().replays).toBe(6);
  });

  it('disposes everything on close and refuses later dispatches', async () => {
    const capturer = new GraphCapturer({ device: 'cpu', arch: 'generic' });
    const instance = toyInstance();
    await capturer.dispatch('toy', toyPlan(), instance);
    await capturer.close();
    await capturer.close();
    expect(instance.components.a.captured[0]?.disposed).toBe(true);
    expect(await codeOf(capturer.dispatch('toy', toyPlan(), instance))).toBe('RT_INSTANCE_CLOSED');
  });
});
