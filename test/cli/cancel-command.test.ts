// `flowfleet cancel <id>` against a real coordinator (no workers: the job stays queued).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCoordinator, TOKENS, type TestCoordinator } from '../coordinator/fixture.js';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { runInProcess } from './cli-harness.js';

let server: RedisServer;
let fixture: TestCoordinator;

beforeAll(async () => {
  server = await startRedisServer();
  fixture = await startTestCoordinator(server.url, 'cli-cancel');
});

afterAll(async () => {
  await fixture?.close();
  await server?.stop();
});

async function enqueueQueued(): Promise<{ id: string; lane: string }> {
  const response = await fetch(`${fixture.url}/v1/rollouts`, {
    method: 'POST',
    headers: { ...fixture.auth('trainer'), 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'wan21-mini', prompt: 'p', seeds: [1], waitForCapacity: true }),
  });
  expect(response.status).toBe(202);
  return (await response.json()) as { id: string; lane: string };
}

describe('flowfleet cancel', () => {
  it('cancels a queued rollout (exit 0); again it is API_JOB_NOT_FOUND (exit 1)', async () => {
    const { id, lane } = await enqueueQueued();
    const env = { FLOWFLEET_URL: fixture.url, FLOWFLEET_TOKEN: TOKENS.trainer };
    const human = await runInProcess(['cancel', id], env);
    expect(human.code, human.err).toBe(0);
    expect(human.out).toContain(`cancelled ${id}`);
    const again = await runInProcess(['cancel', id, '--json'], env);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.out)).toMatchObject({ error: { code: 'API_JOB_NOT_FOUND' } });

    const next = await enqueueQueued();
    const json = await runInProcess(['cancel', next.id, '--json'], env);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out)).toEqual({ id: next.id, lane, status: 'cancelled' });
  });

  it('is refused to a viewer token (API_FORBIDDEN, exit 1) and the job stays queued', async () => {
    const { id, lane } = await enqueueQueued();
    const run = await runInProcess(['cancel', id, '--url', fixture.url, '--token', TOKENS.viewer]);
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/API_FORBIDDEN/);
    expect(await fixture.coordinator.services.queues.get(lane).getJobState(id)).toBe('waiting');
  });
});
