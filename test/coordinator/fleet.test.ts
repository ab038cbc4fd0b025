import { FleetSchema, LanesSchema, MatrixSchema, coordinatorKeys } from '@flowfleet/coordinator';
import { writeSafetensors } from '@flowfleet/formats';
import { ScalingSchema } from '@flowfleet/protocol';
import { JOB_LOCK_HEADER, SUMMARY_BYTES_HEADER, fleetKeys } from '@flowfleet/protocol';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { waitUntil } from '../worker/fleet-fixture.js';
import {
  componentRow,
  fakeManifest,
  kernelRow,
  registerFakeWorker,
  rolloutBody,
  startTestCoordinator,
  waitFor,
  type TestCoordinator,
} from './fixture.js';

let server: RedisServer;
let fixture: TestCoordinator;

beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});
beforeEach(async (context) => {
  fixture = await startTestCoordinator(server.url, context.task.name);
});
afterEach(async () => {
  await fixture?.close();
});

async function get(url: string) {
  const response = await fixture.coordinator.app.inject({
    method: 'GET',
    url,
    headers: fixture.auth('viewer'),
  });
  expect(response.statusCode, url).toBe(200);
  return response;
}

const CUDA_MANIFEST = fakeManifest('w-cuda', {
  platform: { device: 'cuda', arch: 'sm80', features: [], cpuArch: 'x86-64-v3' },
  kernels: [
    kernelRow('flow_sde_step', 'cuda', 'sm80'),
    kernelRow('cfg_combine', 'cuda', 'sm80', false),
    kernelRow('flow_sde_step', 'cpu', 'generic'),
    kernelRow('cfg_combine', 'cpu', 'generic'),
  ],
  components: [componentRow('dit', 'cuda'), componentRow('text_encoder', 'cpu')],
  concurrency: 4,
});

describe('fleet, matrix and lanes', () => {
  it('counts live workers per cell from two manifests and drops one whose heartbeat expired', async () => {
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-cpu'), 60_000, 1);
    await registerFakeWorker(fixture.redis, fixture.prefix, CUDA_MANIFEST);
    const held = (
      await fixture.coordinator.app.inject({
        method: 'POST',
        url: '/v1/rollouts',
        headers: fixture.auth('trainer'),
        payload: rolloutBody({ constraints: { devices: ['cuda'] } }),
      })
    ).json();

    const matrix = (await get('/v1/fleet/matrix')).json();
    MatrixSchema.parse(matrix);
    expect(matrix.liveWorkers).toBe(2);
    const count = (registry: string, name: string, device: string, arch?: string) =>
      matrix.cells.find(
        (cell: Record<string, unknown>) =>
          cell['registry'] === registry &&
          cell['name'] === name &&
          cell['device'] === device &&
          cell['arch'] === arch,
      )?.liveWorkers;
    expect(count('kernel', 'flow_sde_step', 'cpu', 'generic')).toBe(2);
    expect(count('kernel', 'flow_match_step', 'cpu', 'generic')).toBe(1);
    expect(count('kernel', 'flow_sde_step', 'cuda', 'sm80')).toBe(1);
    expect(count('kernel', 'cfg_combine', 'cuda', 'sm80')).toBe(0); // declared, unavailable
    expect(count('component', 'dit', 'cuda')).toBe(1);
    expect(count('component', 'text_encoder', 'cpu')).toBe(2);
    const lane = matrix.lanes.find((l: { lane: string }) => l.lane === held.lane);
    expect(lane).toMatchObject({ backlog: 1, capacity: 4, eligibleWorkers: 1 });
    // The ids behind the count: the fleet filtered by the lane.
    const eligible = FleetSchema.parse((await get(`/v1/fleet?lane=${held.lane}`)).json());
    expect(eligible.workers.map((w) => w.workerId)).toEqual(['w-cuda']);
    expect(eligible).toMatchObject({ live: 1, dead: 0 });

    const fleet = (await get('/v1/fleet')).json();
    FleetSchema.parse(fleet);
    expect(fleet).toMatchObject({ live: 2, dead: 0 });
    expect(fleet.workers.find((w: { workerId: string }) => w.workerId === 'w-cpu')).toMatchObject({
      alive: true,
      activeJobs: 1,
      concurrency: 2,
      kernels: { available: 3, declared: 3 },
    });

    // The cuda worker stops beating: its heartbeat key's TTL runs out (shortened here rather than
    // registered short, so a loaded machine cannot expire it before the live assertions above).
    await fixture.redis.pexpire(fleetKeys(fixture.prefix).heartbeat(CUDA_MANIFEST.workerId), 20);
    await waitFor(async () => (await get('/v1/fleet/matrix')).json().liveWorkers === 1, 'expiry');
    const after = (await get('/v1/fleet/matrix')).json();
    const cell = after.cells.find(
      (c: Record<string, unknown>) => c['name'] === 'flow_sde_step' && c['device'] === 'cpu',
    );
    expect(cell.liveWorkers).toBe(1);
    expect(after.cells.some((c: Record<string, unknown>) => c['device'] === 'cuda')).toBe(false);
    expect(after.lanes.find((l: { lane: string }) => l.lane === held.lane)).toMatchObject({
      capacity: 0,
      eligibleWorkers: 0,
    });
    expect((await get(`/v1/fleet?lane=${held.lane}`)).json()).toMatchObject({
      live: 0,
      workers: [],
    });
    const fleetAfter = (await get('/v1/fleet')).json();
    expect(fleetAfter).toMatchObject({ live: 1, dead: 1 });
    expect(
      fleetAfter.workers.find((w: { workerId: string }) => w.workerId === 'w-cuda'),
    ).toMatchObject({
      alive: false,
      activeJobs: 0,
      lastHeartbeatAt: null,
    });
    // A dead worker no longer counts as capacity at enqueue.
    const refused = await fixture.coordinator.app.inject({
      method: 'POST',
      url: '/v1/rollouts',
      headers: fixture.auth('trainer'),
      payload: rolloutBody({ constraints: { devices: ['cuda'] } }),
    });
    expect(refused.statusCode).toBe(409);
  });

  it('forgets a worker dead longer than the retention and an id without a manifest', async () => {
    await fixture.close();
    fixture = await startTestCoordinator(server.url, 'retention', { heartbeatTtlMs: 1 });
    const keys = fleetKeys(fixture.prefix);
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-gone'), 60_000);
    await fixture.redis.del(keys.heartbeat('w-gone'));
    await fixture.redis.sadd(keys.workers, 'w-ghost');
    // First read records when it was first seen dead; a later one, past 100 × 1 ms, forgets it.
    expect(
      (await get('/v1/fleet')).json().workers.map((w: { workerId: string }) => w.workerId),
    ).toEqual(['w-gone']);
    await waitFor(async () => (await get('/v1/fleet')).json().workers.length === 0, 'pruning');
    expect(await fixture.redis.exists(keys.worker('w-gone'))).toBe(0);
    expect(await fixture.redis.smembers(keys.workers)).toEqual([]);
  });

  it('lists lanes with their requirements and queue counts', async () => {
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-1'));
    const enqueued = (
      await fixture.coordinator.app.inject({
        method: 'POST',
        url: '/v1/rollouts',
        headers: fixture.auth('trainer'),
        payload: rolloutBody(),
      })
    ).json();
    const { lanes } = LanesSchema.parse((await get('/v1/lanes')).json());
    expect(lanes).toHaveLength(1);
    expect(lanes[0]).toMatchObject({
      lane: enqueued.lane,
      requirements: { model: 'wan21-mini', ops: ['cfg_combine', 'flow_sde_step'] },
      counts: { waiting: 1 },
      eligibleWorkers: 1,
      capacity: 2,
    });
    // A record is validated once per text: one rewritten malformed is left out on the next read.
    await fixture.redis.hset(fixture.coordinator.services.keys.lanes, enqueued.lane, '{"lane":1}');
    expect(LanesSchema.parse((await get('/v1/lanes')).json()).lanes).toEqual([]);
  });

  it('answers a lane filter naming no recorded lane with a coded error', async () => {
    const query = (lane: string) =>
      fixture.coordinator.app.inject({
        method: 'GET',
        url: `/v1/fleet?lane=${lane}`,
        headers: fixture.auth('viewer'),
      });
    const unknown = await query('lane-00000000000000ff');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 'API_LANE_NOT_FOUND' });
    const malformed = await query('not-a-lane');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ code: 'API_INVALID_PARAMS' });
  });

  it('announces a new lane once on the lane channel', async () => {
    const { Redis } = await import('ioredis');
    const subscriber = new Redis(server.url);
    const messages: string[] = [];
    subscriber.on('message', (_channel, message: string) => messages.push(message));
    await subscriber.subscribe(fleetKeys(fixture.prefix).laneChannel);
    try {
      for (let i = 0; i < 2; i++) {
        await fixture.coordinator.app.inject({
          method: 'POST',
          url: '/v1/rollouts',
          headers: fixture.auth('trainer'),
          payload: rolloutBody({ waitForCapacity: true, seeds: [i] }),
        });
      }
      await waitFor(async () => messages.length === 1, 'the lane announcement');
      const spec = JSON.parse(messages[0] ?? '{}');
      expect(spec.lane).toMatch(/^lane-/);
      expect(spec.requirements.model).toBe('wan21-mini');
      // The second enqueue reuses the lane: published nothing (checked after a round trip).
      await fixture.redis.ping();
      expect(messages).toHaveLength(1);
    } finally {
      await subscriber.quit();
    }
  });
});

describe('scaling', () => {
  it('splits a shared lane by live capacity and gives a cuda-only lane to the cuda class', async () => {
    // cpu/x86-64-v3: 2 slots, 1 busy; cuda/sm80: 4 slots. Registered workers consume nothing.
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-cpu'), 60_000, 1);
    await registerFakeWorker(fixture.redis, fixture.prefix, CUDA_MANIFEST);
    const enqueue = async (body: Record<string, unknown>) => {
      const response = await fixture.coordinator.app.inject({
        method: 'POST',
        url: '/v1/rollouts',
        headers: fixture.auth('trainer'),
        payload: body,
      });
      expect(response.statusCode, response.body).toBe(202);
    };
    for (let seed = 0; seed < 6; seed++) await enqueue(rolloutBody({ seeds: [seed] }));
    for (let seed = 0; seed < 2; seed++) {
      await enqueue(rolloutBody({ seeds: [seed], constraints: { devices: ['cuda'] } }));
    }
    const scaling = ScalingSchema.parse((await get('/v1/scaling')).json());
    expect(scaling.unservedBacklog).toBe(0);
    expect(scaling.classes).toEqual([
      {
        deviceClass: 'cpu/x86-64-v3',
        workers: 1,
        capacity: 2,
        busy: 1,
        exclusiveBacklog: 0,
        sharedBacklog: 6,
        // 6 shared jobs × 2 / (2 + 4) slots.
        sharedAssigned: 2,
        jobsPerReplica: 2,
        // ceil((1 busy + 2) / 2).
        desiredReplicas: 2,
        minReplicas: 0,
        maxReplicas: 32,
        source: 'live',
      },
      {
        deviceClass: 'cuda/sm80',
        workers: 1,
        capacity: 4,
        busy: 0,
        exclusiveBacklog: 2,
        sharedBacklog: 6,
        sharedAssigned: 4,
        jobsPerReplica: 4,
        // ceil((2 + 4) / 4).
        desiredReplicas: 2,
        minReplicas: 0,
        maxReplicas: 32,
        source: 'live',
      },
    ]);
    const text = (await get('/metrics')).body;
    expect(text).toContain('flowfleet_scaling_shared_backlog{device_class="cuda/sm80"} 6');
    expect(text).toContain('flowfleet_scaling_desired_replicas{device_class="cpu/x86-64-v3"} 2');
    // The same class alone, percent-encoded as KEDA's metrics-api trigger sends it.
    const one = (await get('/v1/scaling?deviceClass=cuda%2Fsm80')).json();
    expect(one.classes.map((entry: { deviceClass: string }) => entry.deviceClass)).toEqual([
      'cuda/sm80',
    ]);
    expect(one.classes[0].desiredReplicas).toBe(2);
  });
});

describe('scaling memory', () => {
  it('ignores remembered class records that do not parse or name another class', async () => {
    const key = coordinatorKeys(fixture.prefix).scalingClasses;
    await fixture.redis.hset(key, 'cuda/sm90', 'not json');
    await fixture.redis.hset(key, 'cpu/x86-64-v2', JSON.stringify(CUDA_MANIFEST));
    await fixture.redis.hset(key, 'cuda/sm80', JSON.stringify({ ...CUDA_MANIFEST, weights: {} }));
    const { classes } = ScalingSchema.parse((await get('/v1/scaling')).json());
    expect(classes.map((entry) => [entry.deviceClass, entry.source, entry.workers])).toEqual([
      ['cuda/sm80', 'remembered', 0],
    ]);
    // A live worker of a class replaces its remembered manifest (weights left out).
    await registerFakeWorker(
      fixture.redis,
      fixture.prefix,
      fakeManifest('w-cpu', { weights: { dit: 3 } }),
    );
    // The fleet view is at most a second old: poll until it shows the new worker.
    const stored = await waitUntil(async () => {
      await get('/v1/scaling');
      const value = await fixture.redis.hget(key, 'cpu/x86-64-v3');
      return value === null ? undefined : (JSON.parse(value) as Record<string, unknown>);
    }, 'the live worker to replace its remembered class');
    expect(stored).toMatchObject({ workerId: 'w-cpu', weights: {} });
  });
});

describe('metrics and OpenAPI', () => {
  it('exposes lane depth, jobs by state, sync lag and live workers', async () => {
    const keys = fleetKeys(fixture.prefix);
    await registerFakeWorker(
      fixture.redis,
      fixture.prefix,
      fakeManifest('w-1', { weights: { dit: 1 } }),
    );
    const enqueued = (
      await fixture.coordinator.app.inject({
        method: 'POST',
        url: '/v1/rollouts',
        headers: fixture.auth('trainer'),
        payload: rolloutBody(),
      })
    ).json();
    const blob = (
      await fixture.coordinator.app.inject({
        method: 'PUT',
        url: '/v1/blobs',
        headers: { ...fixture.auth('trainer'), 'content-type': 'application/octet-stream' },
        payload: Buffer.from(
          writeSafetensors({ w: { dtype: 'F32', shape: [1], data: Float32Array.of(1) } }),
        ),
      })
    ).json();
    for (const version of [1, 2, 3]) {
      await fixture.coordinator.app.inject({
        method: 'POST',
        url: '/v1/weights/dit/sync',
        headers: fixture.auth('trainer'),
        payload: { version, sha256: blob.sha256 },
      });
    }
    expect(await fixture.redis.hget(keys.weights('dit'), 'latest')).toBe('3');
    const text = (await get('/metrics')).body;
    expect(text).toContain(`flowfleet_lane_depth{lane="${enqueued.lane}"} 1`);
    expect(text).toContain(`flowfleet_jobs{lane="${enqueued.lane}",state="waiting"} 1`);
    expect(text).toContain('flowfleet_weight_sync_lag{component="dit"} 2');
    expect(text).toContain('flowfleet_weight_version{component="dit"} 3');
    expect(text).toContain('flowfleet_workers{state="live"} 1');
    expect(text).toMatch(
      /flowfleet_http_requests_total\{method="POST",route="\/v1\/rollouts",status="202"\} 1/,
    );
  });

  it('the OpenAPI document lists every registered route with its roles', async () => {
    const doc = (await get('/openapi.json')).json();
    expect(doc.openapi).toBe('3.1.0');
    const routes = fixture.coordinator.routes;
    expect(routes.length).toBeGreaterThanOrEqual(14);
    for (const route of routes) {
      const path = route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      const operation = doc.paths[path]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${route.url}`).toBeDefined();
      expect(operation['x-flowfleet-roles']).toEqual(route.roles);
    }
    const listed = Object.values(doc.paths as Record<string, object>).flatMap((p) =>
      Object.keys(p),
    );
    expect(listed).toHaveLength(routes.length);
    const rollout = doc.paths['/v1/rollouts'].post;
    const schema = rollout.requestBody.content['application/json'].schema;
    expect(schema.required).toEqual(expect.arrayContaining(['model', 'prompt', 'seeds']));
    expect(rollout.responses['409']).toBeDefined();
    expect(doc.components.schemas.JobStatus).toBeDefined();
    const upload = doc.paths['/v1/results/{id}'].put;
    expect(upload.parameters).toEqual([
      expect.objectContaining({ name: 'id', in: 'path', required: true }),
      expect.objectContaining({
        name: SUMMARY_BYTES_HEADER,
        in: 'header',
        required: true,
        schema: expect.objectContaining({ type: 'integer', minimum: 2 }),
      }),
      expect.objectContaining({ name: JOB_LOCK_HEADER, in: 'header', required: true }),
    ]);
    expect(Object.keys(upload.responses)).toEqual(expect.arrayContaining(['409', '422']));
  });
});
