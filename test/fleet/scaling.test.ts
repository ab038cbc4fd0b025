// GET /v1/scaling and the scaling gauges against a real coordinator, Redis and in-process workers
// on two cpu platform signatures (the test-only platform facts the routing tests use too), plus a
// third class that is only configured until its first worker registers.
import { coordinatorKeys } from '@flowfleet/coordinator';
import { ScalingSchema, type ClassScaling, type Scaling } from '@flowfleet/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { addJob, requirementsOf } from '../worker/direct-jobs.js';
import { startTestFleet, tinyRollout, waitUntil, type TestFleet } from '../worker/fleet-fixture.js';

let server: RedisServer;

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  await server?.stop();
});

const V2 = { device: 'cpu', arch: 'x86-64-v2', features: [], cpuArch: 'x86-64-v2' } as const;
const V3 = { device: 'cpu', arch: 'x86-64-v3', features: [], cpuArch: 'x86-64-v3' } as const;
const V4 = { device: 'cpu', arch: 'x86-64-v4', features: [], cpuArch: 'x86-64-v4' } as const;
const V4_CLASS = 'cpu/x86-64-v4';

async function scaling(fleet: TestFleet, deviceClass?: string): Promise<Scaling> {
  const query = deviceClass === undefined ? '' : `?deviceClass=${encodeURIComponent(deviceClass)}`;
  const response = await fleet.api(`/v1/scaling${query}`);
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return ScalingSchema.parse(JSON.parse(text));
}

async function classOf(fleet: TestFleet, deviceClass: string): Promise<ClassScaling> {
  const { classes } = await scaling(fleet, deviceClass);
  expect(classes.map((entry) => entry.deviceClass)).toEqual([deviceClass]);
  return classes[0] as ClassScaling;
}

/** The value of `name{device_class="…"}` on /metrics, or undefined when absent. */
async function gauge(fleet: TestFleet, name: string, deviceClass: string) {
  const text = await (await fleet.api('/metrics')).text();
  const line = text
    .split('\n')
    .find((row) => row.startsWith(`${name}{device_class="${deviceClass}"}`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

describe('GET /v1/scaling', () => {
  it('follows backlog by device class: exclusive lanes, prioritised jobs, finishing, scale-from-zero', async () => {
    const fleet = await startTestFleet(server.url, 'scaling', {
      scalingClasses: {
        [V4_CLASS]: { maxReplicas: 8, jobsPerReplica: 1 },
        '*': { maxReplicas: 4 },
      },
    });
    try {
      const v2 = await fleet.startWorker({ platformFacts: V2, concurrency: 2 });
      await fleet.startWorker({ platformFacts: V3, concurrency: 3 });
      // The fleet view may predate the second registration: wait until it shows both.
      const idle = await waitUntil(async () => {
        const view = await scaling(fleet);
        return view.classes.filter((entry) => entry.source === 'live').length === 2
          ? view
          : undefined;
      }, 'the fleet view to show both workers');
      expect(idle.rule).toMatch(/^desiredReplicas = /);
      expect(idle.classes.map((entry) => [entry.deviceClass, entry.source])).toEqual([
        ['cpu/x86-64-v2', 'live'],
        ['cpu/x86-64-v3', 'live'],
        [V4_CLASS, 'configured'],
      ]);
      expect(idle.classes[0]).toMatchObject({
        workers: 1,
        capacity: 2,
        jobsPerReplica: 2,
        desiredReplicas: 0,
        minReplicas: 0,
        maxReplicas: 4,
      });
      expect(idle.classes[2]).toMatchObject({ workers: 0, capacity: 0, desiredReplicas: 0 });
      expect(await gauge(fleet, 'flowfleet_scaling_capacity', 'cpu/x86-64-v3')).toBe(3);
      expect(await gauge(fleet, 'flowfleet_scaling_workers', V4_CLASS)).toBe(0);

      // Jobs only a v4 worker may run: held (no live worker serves them) on the v4 class alone.
      const body = tinyRollout({ constraints: { minArch: { cpu: 'x86-64-v4' } } });
      const held = [];
      for (const seed of [1, 2, 3]) {
        held.push(await fleet.enqueue({ ...body, seeds: [seed], waitForCapacity: true }));
      }
      expect(await classOf(fleet, V4_CLASS)).toMatchObject({
        exclusiveBacklog: 3,
        sharedBacklog: 0,
        desiredReplicas: 3,
      });
      // Prioritised jobs sit in BullMQ's prioritized set, not the wait list: they count too.
      const requirements = requirementsOf(body);
      for (const priority of [1, 5]) {
        held.push(
          await addJob(fleet.redis, fleet.prefix, body, requirements, undefined, { priority }),
        );
      }
      const counts = await fleet.coordinator().services.queues.counts(held[0]?.lane ?? '');
      expect(counts).toMatchObject({ waiting: 3, prioritized: 2 });
      expect(await classOf(fleet, V4_CLASS)).toMatchObject({
        exclusiveBacklog: 5,
        desiredReplicas: 5,
      });
      expect(await gauge(fleet, 'flowfleet_scaling_desired_replicas', V4_CLASS)).toBe(5);
      expect(await gauge(fleet, 'flowfleet_scaling_exclusive_backlog', V4_CLASS)).toBe(5);
      for (const other of ['cpu/x86-64-v2', 'cpu/x86-64-v3']) {
        expect(await classOf(fleet, other)).toMatchObject({
          exclusiveBacklog: 0,
          desiredReplicas: 0,
        });
      }

      // A v4 worker drains the lane; once every job is done the class asks for nothing.
      const v4 = await fleet.startWorker({ platformFacts: V4, concurrency: 1 });
      for (const { id } of held) await fleet.waitForCompletion(id);
      // The fleet view may be older than the jobs (it is served stale while a new read runs): wait
      // until it shows the v4 worker registered and idle, not merely no busy worker.
      const drained = await waitUntil(async () => {
        const entry = await classOf(fleet, V4_CLASS);
        return entry.source === 'live' && entry.workers === 1 && entry.busy === 0
          ? entry
          : undefined;
      }, 'the fleet view to show the v4 worker registered with no active job');
      expect(drained).toMatchObject({
        source: 'live',
        workers: 1,
        capacity: 1,
        exclusiveBacklog: 0,
        desiredReplicas: 0,
      });

      // Scaled to zero, the class is remembered: a new v4 job asks for one replica again.
      await v4.close();
      await v2.close();
      // The fleet view is at most a second old: wait until it no longer shows the closed workers.
      const gone = await waitUntil(async () => {
        const entry = await classOf(fleet, V4_CLASS);
        return entry.workers === 0 ? entry : undefined;
      }, 'the closed v4 worker to leave the fleet view');
      expect(gone).toMatchObject({ source: 'remembered', workers: 0, jobsPerReplica: 1 });
      const stored = await fleet.redis.hget(coordinatorKeys(fleet.prefix).scalingClasses, V4_CLASS);
      expect(JSON.parse(stored ?? '{}')).toMatchObject({ platform: { arch: 'x86-64-v4' } });
      await fleet.enqueue({ ...body, seeds: [9], waitForCapacity: true });
      expect(await classOf(fleet, V4_CLASS)).toMatchObject({
        workers: 0,
        exclusiveBacklog: 1,
        desiredReplicas: 1,
      });
      // The v2 class went away too, but is remembered with the contract's zeros.
      expect(await classOf(fleet, 'cpu/x86-64-v2')).toMatchObject({
        source: 'remembered',
        workers: 0,
        capacity: 0,
        desiredReplicas: 0,
      });
    } finally {
      await fleet.close();
    }
  }, 120_000);

  it('answers an unknown class 404 and a malformed one 400, coded', async () => {
    const fleet = await startTestFleet(server.url, 'scaling-errors');
    try {
      await fleet.startWorker({ platformFacts: V3 });
      const unknown = await fleet.api(`/v1/scaling?deviceClass=${encodeURIComponent('cuda/sm90')}`);
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toMatchObject({
        code: 'API_DEVICE_CLASS_NOT_FOUND',
        details: { deviceClass: 'cuda/sm90', known: ['cpu/x86-64-v3'] },
      });
      for (const bad of ['sm90', 'tpu/v5', 'cuda/', 'cuda/sm90/x']) {
        const response = await fleet.api(`/v1/scaling?deviceClass=${encodeURIComponent(bad)}`);
        expect(response.status, bad).toBe(400);
        expect(((await response.json()) as { code: string }).code).toBe('API_INVALID_PARAMS');
      }
      // Nothing was remembered for the bad names.
      const remembered = await fleet.redis.hkeys(coordinatorKeys(fleet.prefix).scalingClasses);
      expect(remembered).toEqual(['cpu/x86-64-v3']);
    } finally {
      await fleet.close();
    }
  });
});
