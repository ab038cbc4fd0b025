import { RolloutFile, type FlowfleetClient, type RolloutRecord } from '@flowfleet/client';
import { writeRolloutFile } from '@flowfleet/formats';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  holdNextJob,
  startTestCoordinator,
  summaryFor,
  type HeldTestJob,
  type TestCoordinator,
} from '../coordinator/fixture.js';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { clientFor, rejection } from './client-helpers.js';

let server: RedisServer;
let fixture: TestCoordinator;
let trainer: FlowfleetClient;
let worker: FlowfleetClient;
let held: HeldTestJob | undefined;

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
  await held?.close();
  held = undefined;
  await fixture?.close();
});

const T = 3;
const G = 2;
const DIMS = [4, 1, 2, 3]; // n = 24

/** A rollout record as the runtime produces it, with values that encode their position. */
function rolloutRecord(prompt = 'a red fox in snow'): RolloutRecord {
  const n = DIMS.reduce((a, b) => a * b, 1);
  const sigmas = Float64Array.of(1, 0.7, 0.35, 0);
  return {
    metadata: {
      model: 'wan21-mini',
      loopId: 'diffusion_denoise',
      prompt,
      negativePrompt: '',
      sampler: 'sde',
      steps: T,
      group: G,
      latentDims: DIMS,
      noiseLevel: 0.7,
      guidanceScale: 4.5,
      shift: 3,
      weightsVersions: { dit: 4, text_encoder: 0 },
      backend: { dit: 'cpu-reference', text_encoder: 'cpu-reference' },
      platform: { device: 'cpu', arch: 'x86-64-v3' },
      interceptors: [],
    },
    latents: Float32Array.from({ length: (T + 1) * G * n }, (_, i) => i / 8),
    logProbs: Float64Array.from({ length: T * G }, (_, i) => -0.5 - i),
    seeds: [7, 2 ** 41 + 3],
    sigmas,
    timesteps: Float64Array.from(sigmas.subarray(0, T), (s) => 1000 * s),
    stepIndices: Int32Array.of(0, 1, 2),
  };
}

/** Enqueues a job, takes it as a stand-in worker and stores `bytes` as its result. */
async function storedResult(bytes: Uint8Array): Promise<string> {
  const { id, lane } = await trainer.enqueueRollouts({
    model: 'wan21-mini',
    prompt: 'a red fox in snow',
    seeds: [7, 2 ** 41 + 3],
    steps: T,
    waitForCapacity: true,
  });
  held = await holdNextJob(fixture, lane);
  const write = await worker.uploadResults(id, held.lockToken, summaryFiles(id, bytes));
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
  it("reads the worker's rollout file, uploaded through PUT /v1/results/:id, with formats' reader", async () => {
    const record = rolloutRecord();
    const bytes = writeRolloutFile(record);
    const id = await storedResult(bytes);
    expect(Buffer.from(await trainer.getResultBytes(id)).equals(Buffer.from(bytes))).toBe(true);

    const file = await trainer.getResult(id);
    expect(file).toBeInstanceOf(RolloutFile);
    expect(file.steps).toBe(T);
    expect(file.group).toBe(G);
    expect(file.latentDims).toEqual(DIMS);
    expect(file.latents).toBeInstanceOf(Float32Array);
    expect(file.latents).toEqual(record.latents);
    expect(file.logProbs).toEqual(record.logProbs);
    expect(file.sigmas).toEqual(record.sigmas);
    expect(file.timesteps).toEqual(record.timesteps);
    expect(file.stepIndices).toEqual(record.stepIndices);
    expect(file.seeds).toEqual([7, 2 ** 41 + 3]);
    const n = 24;
    expect(file.latent(2, 1)).toEqual(record.latents.subarray((2 * G + 1) * n, (2 * G + 2) * n));
    expect(file.finalLatent(1)).toEqual(record.latents.subarray((T * G + 1) * n));
    expect(Array.from(file.logProbsOf(0)!)).toEqual([-0.5, -2.5, -4.5]);
    expect(file.metadata).toEqual(record.metadata);
  });

  it('answers FMT_SAFETENSORS_INVALID for stored bytes that are not a rollout file', async () => {
    const id = await storedResult(new TextEncoder().encode('not safetensors at all'));
    const error = await rejection(trainer.getResult(id));
    expect(error.code).toBe('FMT_SAFETENSORS_INVALID');
  });

  it('answers a second upload of the same bytes unchanged and of other bytes API_RESULT_CONFLICT', async () => {
    const bytes = writeRolloutFile(rolloutRecord());
    const id = await storedResult(bytes);
    const lock = held?.lockToken ?? '';
    const again = await worker.uploadResults(id, lock, summaryFiles(id, bytes));
    expect(again).toMatchObject({ status: 'unchanged', summary: 'kept' });
    const other = writeRolloutFile(rolloutRecord('another prompt'));
    const error = await rejection(worker.uploadResults(id, lock, summaryFiles(id, other)));
    expect(error.code).toBe('API_RESULT_CONFLICT');
  });
});
