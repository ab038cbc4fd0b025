// Lane routing end to end: a worker serves exactly the lanes its manifest satisfies, follows
// lanes as the coordinator creates them, and finds lanes whose announcement it missed.
import { fleetKeys, WorkerHeartbeatSchema } from '@flowfleet/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { addJob, recordLane, requirementsOf } from './direct-jobs.js';
import { startTestFleet, tinyRollout, waitUntil } from './fleet-fixture.js';

let server: RedisServer;

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  await server?.stop();
});

const V3 = { device: 'cpu', arch: 'x86-64-v3', features: [], cpuArch: 'x86-64-v3' } as const;
const V2 = { device: 'cpu', arch: 'x86-64-v2', features: [], cpuArch: 'x86-64-v2' } as const;

describe('lane routing', () => {
  it('sends a job only to the worker whose arch meets its minimum', async () => {
    const fleet = await startTestFleet(server.url, 'route-arch');
    try {
      const newer = await fleet.startWorker({ platformFacts: V3 });
      const older = await fleet.startWorker({ platformFacts: V2 });
      const body = tinyRollout({ constraints: { minArch: { cpu: 'x86-64-v3' } } });
      const jobs = await Promise.all(
        [1, 2, 3].map((seed) => fleet.enqueue({ ...body, seeds: [seed] })),
      );
      const lane = jobs[0]?.lane ?? '';
      for (const { id } of jobs) {
        const done = await fleet.waitForCompletion(id);
        expect(done.summary?.worker).toBe(newer.workerId);
        expect(done.summary?.platform.arch).toBe('x86-64-v3');
      }
      expect(newer.stats().lanes).toContain(lane);
      expect(older.stats().lanes).not.toContain(lane);
      expect(older.whyNotServing(lane)).toEqual([
        "arch 'x86-64-v2' is below the minimum 'x86-64-v3' for cpu",
      ]);
      // The heartbeats say the same (the coordinator's capacity view reads them).
      const beat = await fleet.redis.get(fleetKeys(fleet.prefix).heartbeat(older.workerId));
      expect(WorkerHeartbeatSchema.parse(JSON.parse(beat ?? '{}')).lanes).not.toContain(lane);
    } finally {
      await fleet.close();
    }
  });

  it('sends a job needing an extra kernel only to the worker that declares it', async () => {
    const fleet = await startTestFleet(server.url, 'route-kernel');
    try {
      const plain = await fleet.startWorker();
      const extra = await fleet.startWorker({
        extraKernels: [{ op: 'x_probe', variant: 'default' }],
      });
      const body = tinyRollout();
      const requirements = requirementsOf(body, ['x_probe']);
      const lane = await recordLane(fleet.redis, fleet.prefix, requirements, true);
      const jobs: { id: string; lane: string }[] = [];
      for (let i = 0; i < 3; i++)
        jobs.push(await addJob(fleet.redis, fleet.prefix, body, requirements));
      for (const { id } of jobs) {
        expect((await fleet.waitForCompletion(id)).summary?.worker).toBe(extra.workerId);
      }
      const arch = plain.manifest().platform.arch;
      expect(plain.whyNotServing(lane)).toEqual([
        `no kernel for op 'x_probe' on cpu at arch '${arch}'`,
      ]);
      expect(extra.manifest().kernels).toContainEqual(
        expect.objectContaining({
          key: expect.objectContaining({ op: 'x_probe' }),
          available: true,
        }),
      );
    } finally {
      await fleet.close();
    }
  });

  it('picks up lanes the coordinator creates while it runs (announcements, no rescan)', async () => {
    const fleet = await startTestFleet(server.url, 'route-new-lanes');
    try {
      const worker = await fleet.startWorker({ rescanIntervalMs: 600_000 });
      expect(worker.stats().lanes).toEqual([]);
      const bodies = [
        tinyRollout(),
        tinyRollout({ sampler: 'ode' }),
        tinyRollout({ guidanceScale: 1 }),
      ];
      const lanes = new Set<string>();
      for (const body of bodies) {
        const { id, lane } = await fleet.enqueue(body);
        lanes.add(lane);
        // Well inside 10 s while the rescan is 10 minutes away: announcements did it.
        await fleet.waitForCompletion(id, 10_000);
      }
      expect(lanes.size).toBe(3);
      expect(worker.stats().lanes).toEqual([...lanes].sort());
    } finally {
      await fleet.close();
    }
  });

  it('finds a lane whose announcement it missed on the next rescan', async () => {
    const fleet = await startTestFleet(server.url, 'route-rescan');
    try {
      const worker = await fleet.startWorker({ rescanIntervalMs: 200 });
      const body = tinyRollout({ sampler: 'ode' });
      const requirements = requirementsOf(body);
      const lane = await recordLane(fleet.redis, fleet.prefix, requirements, false);
      const { id } = await addJob(fleet.redis, fleet.prefix, body, requirements);
      await waitUntil(() => (worker.stats().lanes.includes(lane) ? true : undefined), 'the rescan');
      expect((await fleet.waitForCompletion(id)).summary?.worker).toBe(worker.workerId);
    } finally {
      await fleet.close();
    }
  });
});
