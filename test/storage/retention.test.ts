// Retention on a real Redis and real files: a sweep forgets superseded weight versions (record,
// acks, blobs) except those a live worker holds, a queued job pins, the newest ones and LoRA
// bases; removes finished jobs and their result files past their age, never those of a job that
// may still run; and the fleet keeps serving on the current version throughout.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { coordinatorKeys } from '@flowfleet/coordinator';
import { encodeWeights } from '@flowfleet/models';
import { initWeights, wan21MiniCard } from '@flowfleet/models/wan21';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeManifest, registerFakeWorker, summaryFor } from '../coordinator/fixture.js';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { startTestFleet, tinyRollout, waitUntil, type TestFleet } from '../worker/fleet-fixture.js';

let server: RedisServer;

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  await server?.stop();
});

const RETENTION = {
  jobRetentionSeconds: 1,
  jobsKept: 1_000,
  resultRetentionSeconds: 1,
  weightVersionsKept: 2,
  weightGraceSeconds: 0,
  // Sweeps run when the test asks (services.retention.sweep()).
  sweepIntervalMs: 3_600_000,
};

function sweep(
  fleet: TestFleet,
): ReturnType<TestFleet['coordinator']>['services']['retention']['sweep'] {
  return () => fleet.coordinator().services.retention.sweep();
}

async function versionFields(fleet: TestFleet): Promise<number[]> {
  const fields = await fleet.redis.hkeys(coordinatorKeys(fleet.prefix).weights('dit'));
  return fields
    .filter((f) => f.startsWith('v:'))
    .map((f) => Number(f.slice(2)))
    .sort((a, b) => a - b);
}

const blobPath = (fleet: TestFleet, sha256: string): string =>
  join(fleet.blobDir, 'sha256', sha256);

describe('retention sweeps', () => {
  it('forget superseded weight versions but never one held, pinned or among the newest', async () => {
    const fleet = await startTestFleet(server.url, 'retention-weights', { retention: RETENTION });
    try {
      const worker = await fleet.startWorker();
      const shas: string[] = [];
      for (let version = 1; version <= 5; version++) {
        shas.push(
          await fleet.syncWeights(
            'dit',
            version,
            encodeWeights(initWeights(wan21MiniCard.config, version, 'dit')),
          ),
        );
      }
      const keys = coordinatorKeys(fleet.prefix);
      await waitUntil(
        async () =>
          (await fleet.redis.hexists(keys.acks('dit', 5), worker.workerId)) === 1
            ? true
            : undefined,
        'the worker to ack version 5',
      );
      // A live worker that still holds version 1, and a job no worker can serve yet pinned to 2.
      await registerFakeWorker(
        fleet.redis,
        fleet.prefix,
        fakeManifest('holder', { weights: { dit: 1 } }),
      );
      const pinned = await fleet.enqueue(
        tinyRollout({
          weights: { dit: { exact: 2 } },
          constraints: { devices: ['cuda'] },
          waitForCapacity: true,
        }),
      );
      expect((await fleet.status(pinned.id)).status).toBe('queued');

      const first = await sweep(fleet)();
      expect(first.weights.forgottenVersions).toBe(1);
      expect(await versionFields(fleet)).toEqual([1, 2, 4, 5]);
      expect(await fleet.redis.exists(keys.acks('dit', 3))).toBe(0);
      expect(shas.map((sha) => existsSync(blobPath(fleet, sha)))).toEqual([
        true,
        true,
        false,
        true,
        true,
      ]);

      // The holder goes away and the pinned job is removed: 1 and 2 go on the next sweep.
      await fleet.redis.del(keys.heartbeat('holder'));
      const lane = fleet.coordinator().services.queues.get(pinned.lane);
      await lane.remove(pinned.id);
      const second = await sweep(fleet)();
      expect(second.weights.forgottenVersions).toBe(2);
      expect(await versionFields(fleet)).toEqual([4, 5]);
      expect(shas.map((sha) => existsSync(blobPath(fleet, sha)))).toEqual([
        false,
        false,
        false,
        true,
        true,
      ]);

      const weightsReport = await (await fleet.api('/v1/weights/dit')).json();
      expect(Object.keys((weightsReport as { versions: object }).versions).sort()).toEqual([
        '4',
        '5',
      ]);
      // The fleet still serves on the current version.
      const { id } = await fleet.enqueue(tinyRollout({ weights: { dit: { min: 5 } } }));
      const done = await fleet.waitForCompletion(id, 30_000);
      expect(done.summary?.weightsVersions['dit']).toBe(5);
    } finally {
      await fleet.close();
    }
  }, 90_000);

  it('remove finished jobs and their results past their age, never those of a job that may run', async () => {
    const fleet = await startTestFleet(server.url, 'retention-jobs', { retention: RETENTION });
    try {
      await fleet.startWorker();
      const finished = await Promise.all(
        [1, 2, 3].map((seed) => fleet.enqueue(tinyRollout({ seeds: [seed] }))),
      );
      await Promise.all(finished.map(({ id }) => fleet.waitForCompletion(id, 30_000)));
      // A queued job (no worker serves its lane) with a result file already stored for it.
      const waiting = await fleet.enqueue(
        tinyRollout({ constraints: { devices: ['cuda'] }, waitForCapacity: true }),
      );
      // What an attempt cut between its upload and its completion leaves (the API stores a
      // result only from the holder, ADR 014, so it is written into the store directly here).
      const summary = Buffer.from(JSON.stringify(summaryFor(waiting.id, [11, 12], 2)));
      const { rollouts, blobs } = fleet.coordinator().services;
      const bytes = Buffer.from('not a rollout, but bytes');
      await blobs.putResult(waiting.id, 'result.safetensors', [bytes], 1 << 20);
      await blobs.putResult(waiting.id, 'summary.json', [summary], 1 << 20);

      // Poll sweeps until the finished ones are past the 1 s retention (no fixed sleep).
      let removedResults = 0;
      let removedJobs = 0;
      await waitUntil(
        async () => {
          const swept = await sweep(fleet)();
          removedResults += swept.removedResults;
          removedJobs += swept.removedJobs;
          // A result is stored just before its job completes: the job may outlive it by a sweep.
          const gone = await Promise.all(
            finished.map(async ({ id }) => !(await rollouts.exists(id))),
          );
          return removedResults >= 3 && gone.every(Boolean) ? true : undefined;
        },
        'sweeps to remove the finished jobs’ results',
        15_000,
      );
      expect(removedResults).toBe(3);
      // BullMQ itself removes some on later completions (removeOnComplete's age); the rest here.
      expect(removedJobs).toBeLessThanOrEqual(3);
      for (const { id } of finished) {
        expect(await rollouts.exists(id)).toBe(false);
        expect(existsSync(join(fleet.blobDir, 'results', id))).toBe(false);
      }
      // The waiting job's result past the retention too, then one more sweep: it stays.
      const waitingDir = join(fleet.blobDir, 'results', waiting.id);
      await waitUntil(
        () => (Date.now() - statSync(waitingDir).mtimeMs > 1_500 ? true : undefined),
        'the waiting job’s result to be past the retention',
      );
      expect((await sweep(fleet)()).removedResults).toBe(0);
      expect(await rollouts.exists(waiting.id)).toBe(true);
      expect((await fleet.status(waiting.id)).status).toBe('queued');
      expect(existsSync(join(fleet.blobDir, 'results', waiting.id))).toBe(true);
    } finally {
      await fleet.close();
    }
  }, 90_000);
});
