// The runtime on ONNX Runtime (cpu EP, the test's own compute pool): captured ≡ eager bit for bit,
// captured graphs are specialised sessions disposed on eviction, and a dit sync keeps the
// text-encoder session.
import { declareOrtCells, ortCellWiring, OrtSessions } from '@flowfleet/backends';
import { ComputePool } from '@flowfleet/platform';
import { createComponentRegistry } from '@flowfleet/registry';
import { ModelInstance, runRollout, type RolloutResult } from '@flowfleet/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { card, cpuPlatform, sameBits, tinyRequest, weightsOf } from './runtime-fixtures.js';

let compute: ComputePool;
let pool: OrtSessions;
let instance: ModelInstance;

beforeAll(async () => {
  compute = await ComputePool.create({ threads: 1 });
  pool = await OrtSessions.attach(compute, { intraOpThreads: 1 });
  const components = createComponentRegistry();
  declareOrtCells({
    registries: { components },
    kinds: card.components.map((c) => c.kind),
    ...ortCellWiring(pool),
  });
  instance = await ModelInstance.create({
    card,
    platform: cpuPlatform(compute, components),
    weights: {
      dit: { version: 1, weights: weightsOf('dit', 1) },
      text_encoder: { version: 1, weights: weightsOf('text_encoder', 1) },
    },
  });
});

afterAll(async () => {
  await instance?.close();
  await compute?.close();
});

function expectSameTrajectory(a: RolloutResult, b: RolloutResult): void {
  expect(sameBits(a.record.latents, b.record.latents)).toBe(true);
  expect(sameBits(a.record.logProbs, b.record.logProbs)).toBe(true);
}

describe('runRollout on ONNX Runtime', () => {
  it('builds both components on ort-cpu and gives bit-identical captured and eager trajectories', async () => {
    const captured = await runRollout(instance, tinyRequest());
    expect(captured.record.metadata.backend).toEqual({ dit: 'ort-cpu', text_encoder: 'ort-cpu' });
    expect(captured.captureStats).toMatchObject({ captures: 2, replays: 2, eagerBreaks: 0 });
    const replayed = await runRollout(instance, tinyRequest());
    expect(replayed.captureStats).toMatchObject({ captures: 0, replays: 4 });
    const eager = await runRollout(instance, tinyRequest({ graphCapture: 'off' }));
    expectSameTrajectory(captured, eager);
    expectSameTrajectory(replayed, eager);
    expect(instance.capturer.stats().bytesHeld).toBeGreaterThan(0);
  });

  it('evicts only the dit session on a dit sync, and the next rollout recaptures it on v2', async () => {
    const live = async (): Promise<number> =>
      (await pool.stats()).reduce((sum, w) => sum + w.sessionsLive, 0);
    const before = await live();
    await instance.setWeightsVersion('dit', 2, weightsOf('dit', 2));
    expect(instance.capturer.graphs().map((g) => g.components)).toEqual([['text_encoder']]);
    expect(await live()).toBe(before - 1);
    const next = await runRollout(instance, tinyRequest());
    expect(next.record.metadata.weightsVersions.dit).toBe(2);
    expect(next.captureStats).toMatchObject({ captures: 1, replays: 3 });
    const eager = await runRollout(instance, tinyRequest({ graphCapture: 'off' }));
    expectSameTrajectory(next, eager);
  });
});
