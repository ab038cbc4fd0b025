// `flowfleet scaling` against a real coordinator on a real redis-server: the table, --json, one
// class by --device-class, and an unknown class as a coded error (exit 1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  TOKENS,
  fakeManifest,
  registerFakeWorker,
  rolloutBody,
  startTestCoordinator,
  type TestCoordinator,
} from '../coordinator/fixture.js';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { runInProcess } from './cli-harness.js';

let server: RedisServer;
let fixture: TestCoordinator;

beforeAll(async () => {
  server = await startRedisServer();
  fixture = await startTestCoordinator(server.url, 'cli-scaling');
});

afterAll(async () => {
  await fixture?.close();
  await server?.stop();
});

describe('flowfleet scaling', () => {
  it('prints each device class with its backlog and desired replicas', async () => {
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-1'));
    const enqueued = await fixture.coordinator.app.inject({
      method: 'POST',
      url: '/v1/rollouts',
      headers: fixture.auth('trainer'),
      payload: rolloutBody(),
    });
    expect(enqueued.statusCode).toBe(202);
    const env = { FLOWFLEET_URL: fixture.url, FLOWFLEET_TOKEN: TOKENS.viewer };

    const human = await runInProcess(['scaling'], env);
    expect(human.code, human.err).toBe(0);
    const row = human.out.split('\n').find((text) => text.includes('cpu/x86-64-v3')) ?? '';
    // class, known, workers, busy/capacity, exclusive, shared (counted), jobs/replica, desired.
    expect(row.split(/\s+/).filter(Boolean).slice(0, 9)).toEqual([
      'cpu/x86-64-v3',
      'live',
      '1',
      '0/2',
      '1',
      '0',
      '(0)',
      '2',
      '1',
    ]);
    expect(human.out).toMatch(/^rule: desiredReplicas = /m);

    const json = await runInProcess(['scaling', '--json', '--device-class', 'cpu/x86-64-v3'], env);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out).classes).toEqual([
      expect.objectContaining({ deviceClass: 'cpu/x86-64-v3', desiredReplicas: 1 }),
    ]);

    const unknown = await runInProcess(['scaling', '--device-class', 'cuda/sm90'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/API_DEVICE_CLASS_NOT_FOUND/);
  });
});
