// Weight-version semantics of a ModelInstance: eviction of exactly one component's graphs,
// in-flight rollouts finishing on the version they started with, and cancellation releasing pins.
import { isFlowfleetError } from '@flowfleet/errors';
import { ComputePool, type CapturedForward, type ComponentForward } from '@flowfleet/platform';
import {
  runRollout,
  type ModelInstance,
  type RolloutResult,
  type StepObserver,
} from '@flowfleet/runtime';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  deferred,
  referenceInstance,
  sameBits,
  tinyRequest,
  weightsOf,
} from './runtime-fixtures.js';

let pool: ComputePool;
beforeAll(async () => {
  pool = await ComputePool.create();
});
afterAll(async () => {
  await pool.close();
});

const open: ModelInstance[] = [];
async function instance(): Promise<ModelInstance> {
  const created = await referenceInstance(pool);
  open.push(created);
  return created;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((i) => i.close()));
});

/** Wraps a component's capture so the test sees which captured forwards were disposed. */
function trackCaptures(component: ComponentForward): { weights: string; disposed: boolean }[] {
  const seen: { weights: string; disposed: boolean }[] = [];
  const target = component as { capture?: ComponentForward['capture'] };
  const original = component.capture?.bind(component);
  target.capture = async (weights, dims): Promise<CapturedForward> => {
    const record = { weights: weights.id, disposed: false };
    seen.push(record);
    const inner: CapturedForward = original
      ? await original(weights, dims)
      : { run: (inputs) => component.run(inputs, weights), bytesHeld: 0, dispose: async () => {} };
    return {
      run: (inputs) => inner.run(inputs),
      bytesHeld: inner.bytesHeld,
      dispose: async () => {
        record.disposed = true;
        await inner.dispose();
      },
    };
  };
  return seen;
}

/** An observer that runs `action` once, at denoise step `index`. */
function atStep(index: number, action: () => void): StepObserver {
  return {
    name: `at-step-${index}`,
    onStep: (step) => {
      if (step.kind === 'denoise' && step.index === index) action();
    },
  };
}

async function referenceRun(version: number): Promise<RolloutResult> {
  const inst = await instance();
  if (version !== 1) await inst.setWeightsVersion('dit', version, weightsOf('dit', version));
  return runRollout(inst, tinyRequest());
}

describe('ModelInstance weight versions', () => {
  it("setWeightsVersion('dit') evicts only dit graphs; the next run recaptures dit only", async () => {
    const inst = await instance();
    const ditCaptures = trackCaptures(inst.component('dit'));
    const encoderCaptures = trackCaptures(inst.component('text_encoder'));
    await runRollout(inst, tinyRequest());
    expect(inst.capturer.graphs().map((g) => g.components)).toEqual([['text_encoder'], ['dit']]);
    await inst.setWeightsVersion('dit', 2, weightsOf('dit', 2));
    expect(inst.residentVersions('dit')).toEqual([2]);
    expect(inst.capturer.graphs().map((g) => g.components)).toEqual([['text_encoder']]);
    expect(ditCaptures).toEqual([{ weights: 'dit@1', disposed: true }]);
    expect(encoderCaptures).toEqual([{ weights: 'text_encoder@1', disposed: false }]);
    const next = await runRollout(inst, tinyRequest());
    expect(next.record.metadata.weightsVersions).toEqual({ dit: 2, text_encoder: 1 });
    expect(next.captureStats).toMatchObject({ captures: 1, replays: 3 });
    expect(ditCaptures.map((c) => c.weights)).toEqual(['dit@1', 'dit@2']);
    expect(inst.capturer.stats()).toMatchObject({ evictions: 1, liveGraphs: 2 });
  });

  it('finishes a rollout started on v1 on v1 while one started after the sync uses v2', async () => {
    const inst = await instance();
    const ditCaptures = trackCaptures(inst.component('dit'));
    const started = deferred<Promise<RolloutResult>>();
    const checks: { resident: readonly number[]; pins: number }[] = [];
    const first = runRollout(
      inst,
      tinyRequest({
        observers: [
          atStep(0, () => {
            const sync = inst.setWeightsVersion('dit', 2, weightsOf('dit', 2));
            started.resolve(sync.then(() => runRollout(inst, tinyRequest())));
          }),
          atStep(2, () =>
            checks.push({ resident: inst.residentVersions('dit'), pins: inst.pinCount('dit', 1) }),
          ),
        ],
      }),
    );
    const [onV1, onV2] = await Promise.all([first, started.promise.then((p) => p)]);
    expect(onV1.record.metadata.weightsVersions.dit).toBe(1);
    expect(onV2.record.metadata.weightsVersions.dit).toBe(2);
    expect(checks).toEqual([{ resident: [2, 1], pins: 1 }]);
    const [refV1, refV2] = [await referenceRun(1), await referenceRun(2)];
    expect(
      sameBits(onV1.record.latents, refV1.record.latents) &&
        sameBits(onV1.record.logProbs, refV1.record.logProbs),
    ).toBe(true);
    expect(
      sameBits(onV2.record.latents, refV2.record.latents) &&
        sameBits(onV2.record.logProbs, refV2.record.logProbs),
    ).toBe(true);
    expect(sameBits(refV1.record.latents, refV2.record.latents)).toBe(false);
    // v1 was released when its last rollout ended: its graph is gone and disposed.
    expect(inst.residentVersions('dit')).toEqual([2]);
    expect(ditCaptures.filter((c) => c.weights === 'dit@1')).toEqual([
      { weights: 'dit@1', disposed: true },
    ]);
    expect(
      inst.capturer
        .graphs()
        .flatMap((g) => (g.parts.weights['dit'] === undefined ? [] : [g.parts.weights['dit']])),
    ).toEqual([2]);
  });

  it('cancels at a step boundary and releases the version it pinned', async () => {
    const inst = await instance();
    const ditCaptures = trackCaptures(inst.component('dit'));
    const controller = new AbortController();
    let error: unknown;
    const stepsSeen: number[] = [];
    await runRollout(
      inst,
      tinyRequest({
        steps: 4,
        signal: controller.signal,
        observers: [
          {
            name: 'steps',
            onStep: (step) => void (step.kind === 'denoise' && stepsSeen.push(step.index)),
          },
          atStep(1, () => {
            void inst.setWeightsVersion('dit', 2, weightsOf('dit', 2));
            controller.abort(new Error('trainer moved on'));
          }),
        ],
      }),
    ).catch((e: unknown) => (error = e));
    expect(isFlowfleetError(error, 'RT_CANCELLED')).toBe(true);
    expect((error as { details: { stepsRun: number } }).details.stepsRun).toBe(3);
    expect(stepsSeen).toEqual([0, 1]);
    expect(inst.pinCount('dit', 1)).toBe(0);
    expect(inst.residentVersions('dit')).toEqual([2]);
    expect(ditCaptures).toEqual([{ weights: 'dit@1', disposed: true }]);
  });

  it('refuses a version the component already holds, an unknown component, and use after close', async () => {
    const inst = await instance();
    const codeOf = async (p: Promise<unknown>): Promise<string | undefined> =>
      p.then(
        () => undefined,
        (e: unknown) => (isFlowfleetError(e) ? e.code : String(e)),
      );
    expect(await codeOf(inst.setWeightsVersion('dit', 1, weightsOf('dit', 1)))).toBe(
      'RT_WEIGHTS_VERSION_EXISTS',
    );
    expect(await codeOf(inst.setWeightsVersion('vae', 1, weightsOf('dit', 1)))).toBe(
      'RT_UNKNOWN_COMPONENT',
    );
    await inst.close();
    expect(await codeOf(runRollout(inst, tinyRequest()))).toBe('RT_INSTANCE_CLOSED');
  });
});
