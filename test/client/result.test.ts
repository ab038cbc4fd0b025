import type { FlowfleetClient } from '@flowfleet/client';
import { writeRolloutResult, type RolloutResult } from '@flowfleet/runtime';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestCoordinator, summaryFor, type TestCoordinator } from '../coordinator/fixture.js';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { clientFor, rejection } from './client-helpers.js';

let server: RedisServer;
let fixture: TestCoordinator;
let trainer: FlowfleetClient;
let worker: FlowfleetClient;

beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});
beforeEach(async (context) => {
  fixture = await startTestCoordinator(server.url, context.task.name);
  trainer = clientFor(fixture, 'trainer');
  worker = clientFor(fixture, 'worker');
});
afterEach(async () => {
  await fixture?.close();
});

const T = 3;
const G = 2;
const DIMS: readonly [number, number, number, number] = [4, 1, 2, 3]; // n = 24

/** A rollout result as the runtime produces it, with values that encode their position. */
function rolloutResult(): RolloutResult {
  const n = DIMS.reduce((a, b) => a * b, 1);
  const sigmas = Float64Array.of(1, 0.7, 0.35, 0);
  return {
    model: 'wan21-mini',
    loopId: 'diffusion_denoise',
    prompt: 'a red fox in snow',
    negativePrompt: '',
    sampler: 'sde',
    steps: T,
    group: G,
    latentDims: DIMS,
    seeds: [7, 2 ** 41 + 3],
    noiseLevel: 0.7,
    guidanceScale: 4.5,
    shift: 3,
    latents: Float32Array.from({ length: (T + 1) * G * n }, (_, i) => i / 8),
    logProbs: Float64Array.from({ length: T * G }, (_, i) => -0.5 - i),
    sigmas,
    timesteps: Float64Array.from(sigmas.subarray(0, T), (s) => 1000 * s),
    stepIndices: Int32Array.of(0, 1, 2),
    weightsVersions: { dit: 4, text_encoder: 0 },
    backend: { dit: 'cpu-reference', text_encoder: 'cpu-reference' },
    platform: { device: 'cpu', arch: 'x86-64-v3' },
    interceptors: [],
    captureStats: {
      captures: 1,
      replays: 2,
      eagerBreaks: 0,
      eagerBreakReasons: { 'not-capturable': 0, override: 0, 'no-graph-fn': 0 },
      eagerSteps: 0,
      evictions: 0,
      liveGraphs: 0,
      bytesHeld: 0,
      captureMs: 1.5,
    },
    timings: { totalMs: 12, encodeMs: 1, denoiseMs: 10, captureMs: 1.5, stepMs: [3, 3, 4] },
  };
}

async function storedResult(bytes: Uint8Array): Promise<string> {
  const { id } = await trainer.enqueueRollouts({
    model: 'wan21-mini',
    prompt: 'a red fox in snow',
    seeds: [7, 2 ** 41 + 3],
    steps: T,
    waitForCapacity: true,
  });
  const write = await worker.uploadResults(id, summaryFiles(id, bytes));
  expect(write).toMatchObject({ id, status: 'created', summary: 'created' });
  expect(write.sizeBytes).toBe(bytes.byteLength);
  return id;
}

/** What a worker uploads for job `id`: its summary and `result`. */
function summaryFiles(id: string, result: Uint8Array) {
  const summary = new TextEncoder().encode(JSON.stringify(summaryFor(id, [7, 2 ** 41 + 3], T)));
  return { summary, result };
}

describe('getResult', () => {
  it("reads the runtime's rollout file, uploaded through PUT /v1/results/:id, into typed arrays", async () => {
    const result = rolloutResult();
    const bytes = writeRolloutResult(result);
    const id = await storedResult(bytes);
    expect(Buffer.from(await trainer.getResultBytes(id)).equals(Buffer.from(bytes))).toBe(true);

    const file = await trainer.getResult(id);
    expect(file.steps).toBe(T);
    expect(file.group).toBe(G);
    expect(file.latentDims).toEqual(DIMS);
    expect(file.latents).toBeInstanceOf(Float32Array);
    expect(file.latents).toEqual(result.latents);
    expect(file.logProbs).toEqual(result.logProbs);
    expect(file.sigmas).toEqual(result.sigmas);
    expect(file.timesteps).toEqual(result.timesteps);
    expect(file.stepIndices).toEqual(result.stepIndices);
    expect(file.seeds).toEqual([7, 2 ** 41 + 3]);
    const n = 24;
    expect(file.latent(2, 1)).toEqual(result.latents.subarray((2 * G + 1) * n, (2 * G + 2) * n));
    expect(Array.from(file.logProbsOf(0))).toEqual([-0.5, -2.5, -4.5]);
    expect(file.metadata).toMatchObject({
      model: 'wan21-mini',
      sampler: 'sde',
      weightsVersions: { dit: 4, text_encoder: 0 },
      backend: { dit: 'cpu-reference' },
      timings: { totalMs: 12 },
    });
  });

  it('reads the file the worker uploads (per-attempt timings and captureStats left out)', async () => {
    // As the worker's deterministicResultBytes does: drop the fields that differ per attempt.
    const stable = Object.fromEntries(
      Object.entries(rolloutResult()).filter(
        ([field]) => !['timings', 'captureStats'].includes(field),
      ),
    );
    const id = await storedResult(writeRolloutResult(stable as unknown as RolloutResult));
    const file = await trainer.getResult(id);
    expect(file.metadata.timings).toBeUndefined();
    expect(file.metadata.captureStats).toBeUndefined();
    expect(file.finalLatent(1)).toEqual(rolloutResult().latents.subarray((T * G + 1) * 24));
  });

  it('answers CLIENT_RESULT_INVALID for stored bytes that are not a rollout file', async () => {
    const id = await storedResult(new TextEncoder().encode('not safetensors at all'));
    const error = await rejection(trainer.getResult(id));
    expect(error.code).toBe('CLIENT_RESULT_INVALID');
  });

  it('answers a second upload of the same bytes unchanged and of other bytes API_RESULT_CONFLICT', async () => {
    const bytes = writeRolloutResult(rolloutResult());
    const id = await storedResult(bytes);
    const again = await worker.uploadResults(id, summaryFiles(id, bytes));
    expect(again).toMatchObject({ status: 'unchanged', summary: 'kept' });
    const other = writeRolloutResult({ ...rolloutResult(), prompt: 'another prompt' });
    const error = await rejection(worker.uploadResults(id, summaryFiles(id, other)));
    expect(error.code).toBe('API_RESULT_CONFLICT');
  });
});
