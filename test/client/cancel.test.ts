// FlowfleetClient.cancelRollout against a real coordinator: a queued job is removed and never
// runs; a running one is refused and finishes.
import type { FlowfleetClient } from '@flowfleet/client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  holdNextJob,
  startTestCoordinator,
  type HeldTestJob,
  type TestCoordinator,
} from '../coordinator/fixture.js';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { clientFor, rejection } from './client-helpers.js';

let server: RedisServer;
let fixture: TestCoordinator;
let trainer: FlowfleetClient;
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
});
afterEach(async () => {
  await held?.close();
  held = undefined;
  await trainer?.close();
  await fixture?.close();
});

const REQUEST = { model: 'wan21-mini', prompt: 'a red fox', seeds: [1], waitForCapacity: true };

describe('cancelRollout', () => {
  it('removes a queued rollout: its status then answers API_JOB_NOT_FOUND', async () => {
    const { id, lane } = await trainer.enqueueRollouts(REQUEST);
    expect(await trainer.cancelRollout(id)).toEqual({ id, lane, status: 'cancelled' });
    expect((await rejection(trainer.status(id))).code).toBe('API_JOB_NOT_FOUND');
    expect((await rejection(trainer.cancelRollout(id))).code).toBe('API_JOB_NOT_FOUND');
  });

  it('refuses a running rollout with API_JOB_NOT_CANCELLABLE; it stays active', async () => {
    const { id, lane } = await trainer.enqueueRollouts(REQUEST);
    held = await holdNextJob(fixture, lane);
    const error = await rejection(trainer.cancelRollout(id));
    expect(error.code).toBe('API_JOB_NOT_CANCELLABLE');
    expect(error.details).toMatchObject({ status: 'active' });
    expect((await trainer.status(id)).status).toBe('active');
  });

  it('is refused to a viewer (API_FORBIDDEN) and changes nothing', async () => {
    const { id } = await trainer.enqueueRollouts(REQUEST);
    const viewer = clientFor(fixture, 'viewer');
    try {
      expect((await rejection(viewer.cancelRollout(id))).code).toBe('API_FORBIDDEN');
    } finally {
      await viewer.close();
    }
    expect((await trainer.status(id)).status).toBe('queued');
  });
});
