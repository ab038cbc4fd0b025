// A coordinator restart under load loses nothing: workers keep pulling jobs from Redis, retry
// their result uploads until the coordinator is back, and every job ends with exactly one result.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { coordinatorKeys } from '@flowfleet/coordinator';
import { JobProgressSchema } from '@flowfleet/protocol';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { startTestFleet, tinyRollout, waitUntil } from '../worker/fleet-fixture.js';

let server: RedisServer;

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  await server?.stop();
});

describe('a coordinator restart under load', () => {
  it('loses no job and duplicates no result', async () => {
    const fleet = await startTestFleet(server.url, 'fleet-restart');
    try {
      const workers = [
        await fleet.startWorker({ concurrency: 2 }),
        await fleet.startWorker({ concurrency: 2 }),
      ];
      const jobs: { id: string; lane: string }[] = [];
      for (let seed = 1; seed <= 10; seed++) {
        jobs.push(await fleet.enqueue(tinyRollout({ seeds: [seed, seed + 100], steps: 3 })));
      }
      // Stop the coordinator while some jobs are done, some running and some still queued.
      await waitUntil(
        async () => {
          const statuses = await Promise.all(jobs.map(({ id }) => fleet.status(id)));
          return statuses.some((s) => s.status === 'completed') ? true : undefined;
        },
        'the first completion',
        60_000,
      );
      await fleet.stopCoordinator();
      // While it is down, a rollout finishes and its worker keeps retrying the upload (the job
      // stays active, at its last step, in BullMQ).
      const lane = jobs[0]?.lane ?? '';
      const queue = new Queue(lane, {
        connection: fleet.redis,
        prefix: coordinatorKeys(fleet.prefix).laneBullPrefix(lane),
      });
      try {
        await waitUntil(async () => {
          const active = await queue.getJobs(['active']);
          return active.some((job) => JobProgressSchema.safeParse(job.progress).data?.step === 3)
            ? true
            : undefined;
        }, 'a finished rollout waiting to upload');
      } finally {
        await queue.close();
      }
      await fleet.startCoordinator();
      for (const { id } of jobs) {
        const done = await fleet.waitForCompletion(id, 60_000);
        expect(done.attempts).toBe(1);
        expect(workers.map((w) => w.workerId)).toContain(done.summary?.worker);
        expect((await readdir(join(fleet.blobDir, 'results', id))).sort()).toEqual([
          'result.safetensors',
          'summary.json',
        ]);
      }
      expect(new Set(jobs.map(({ id }) => id)).size).toBe(10);
    } finally {
      await fleet.close();
    }
  }, 240_000);
});
