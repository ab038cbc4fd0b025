// A worker process SIGKILLed mid-rollout loses nothing: its lock lapses, the job is picked up by
// another worker, and it completes with exactly one result, bit-identical to an undisturbed run
// (a rollout is a pure function of job, weights and backend).
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { coordinatorKeys } from '@flowfleet/coordinator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import {
  startTestFleet,
  TOKENS,
  tinyRollout,
  waitUntil,
  type TestFleet,
} from '../worker/fleet-fixture.js';
import { spawnWorker, STARTUP_TIMEOUT_MS, type ChildWorker } from './child-worker.js';

let server: RedisServer;

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  await server?.stop();
});

function childEnv(fleet: TestFleet): Record<string, string> {
  return {
    REDIS_URL: fleet.redisUrl,
    FLOWFLEET_COORDINATOR_URL: fleet.url,
    FLOWFLEET_WORKER_TOKEN: TOKENS.worker,
    FLOWFLEET_PREFIX: fleet.prefix,
    // ONNX Runtime in the backends' worker threads: the production path.
    FLOWFLEET_BACKEND: 'ort-cpu',
    FLOWFLEET_LOCK_MS: '2000',
    FLOWFLEET_STALLED_INTERVAL_MS: '1000',
    FLOWFLEET_POLL_MS: '500',
    FLOWFLEET_DRAIN_TIMEOUT_MS: '2000',
  };
}

async function waitForHeartbeat(fleet: TestFleet, worker: ChildWorker): Promise<void> {
  const key = coordinatorKeys(fleet.prefix).heartbeat(worker.workerId);
  await waitUntil(
    async () => {
      if (worker.process.exitCode !== null) {
        throw new Error(`worker ${worker.workerId} exited:\n${worker.output()}`);
      }
      return (await fleet.redis.exists(key)) === 1 ? true : undefined;
    },
    `worker ${worker.workerId} to register`,
    STARTUP_TIMEOUT_MS,
  );
}

describe('a worker killed mid-rollout', () => {
  it('loses nothing: the job completes elsewhere with one result, identical to an undisturbed run', async () => {
    const fleet = await startTestFleet(server.url, 'fleet-kill');
    const children: ChildWorker[] = [];
    try {
      // Two workers; whichever takes the job is killed, the other must finish it.
      const workers = ['a', 'b'].map((name) =>
        spawnWorker(`${name}-${fleet.prefix.slice(-6)}`, childEnv(fleet)),
      );
      children.push(...workers);
      await Promise.all(workers.map((worker) => waitForHeartbeat(fleet, worker)));
      const body = tinyRollout({ steps: 30 });
      const { id } = await fleet.enqueue(body);
      const running = await waitUntil(
        async () => {
          const status = await fleet.status(id);
          return status.status === 'active' && status.progress.step >= 2 ? status : undefined;
        },
        'the rollout to be under way',
        30_000,
      );
      expect(running.progress.step).toBeLessThan(30);
      const doomed = workers.find((worker) => worker.workerId === running.worker);
      const rescuer = workers.find((worker) => worker !== doomed);
      if (doomed === undefined || rescuer === undefined)
        throw new Error(`ran on ${running.worker}`);
      expect(await doomed.stop('SIGKILL')).toBe('SIGKILL');

      const done = await fleet.waitForCompletion(id, 60_000);
      expect(done.summary?.worker).toBe(rescuer.workerId);
      expect(done.summary?.backend).toEqual({ dit: 'ort-cpu', text_encoder: 'ort-cpu' });
      expect(done.attempts).toBeLessThanOrEqual(1); // a stall is not a failed attempt
      expect((await readdir(join(fleet.blobDir, 'results', id))).sort()).toEqual([
        'result.safetensors',
        'summary.json',
      ]);
      const recovered = await fleet.result(id);

      const undisturbed = await fleet.enqueue(body);
      await fleet.waitForCompletion(undisturbed.id, 30_000);
      const reference = await fleet.result(undisturbed.id);
      expect(Buffer.from(recovered).equals(Buffer.from(reference))).toBe(true);
      expect(await rescuer.stop('SIGTERM')).toBe(0);
      expect(rescuer.output()).toContain('worker closed');
    } finally {
      await Promise.all(children.map((child) => child.stop('SIGKILL')));
      await fleet.close();
    }
  }, 240_000);
});
