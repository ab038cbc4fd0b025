// Fleet limits are fleet facts: the coordinator publishes the limits it enforces, and the workers
// and status views read stored jobs with them. A limit raised on the coordinator alone lets a job
// inside it run on a worker that was never told, and its status answers 200 throughout; a stored
// payload that cannot be read is a failed job with its code, never a 500.
import {
  coordinatorKeys,
  limitsFromEnv,
  parseCoordinatorEnv,
  publishLimits,
} from '@flowfleet/coordinator';
import {
  DEFAULT_LIMITS,
  JobStatusSchema,
  RolloutListSchema,
  fleetKeys,
  publishedLimitsOf,
  type JobStatus,
} from '@flowfleet/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnWorker, type ChildWorker } from '../fleet/child-worker.js';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import {
  TOKENS,
  fakeManifest,
  registerFakeWorker,
  rolloutBody,
  startTestCoordinator,
  waitFor,
  type TestCoordinator,
} from './fixture.js';

let server: RedisServer;

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  await server?.stop();
});

/** The coordinator's limits as `npm run coordinator` would read them from this environment. */
function coordinatorLimits(extra: Record<string, string>) {
  return limitsFromEnv(
    parseCoordinatorEnv({
      REDIS_URL: server.url,
      FLOWFLEET_TRAINER_TOKEN: TOKENS.trainer,
      FLOWFLEET_VIEWER_TOKEN: TOKENS.viewer,
      FLOWFLEET_WORKER_TOKEN: TOKENS.worker,
      ...extra,
    }),
  );
}

async function enqueue(fixture: TestCoordinator, body: Record<string, unknown>) {
  const response = await fixture.coordinator.app.inject({
    method: 'POST',
    url: '/v1/rollouts',
    headers: fixture.auth('trainer'),
    payload: body,
  });
  expect(response.statusCode, response.body).toBe(202);
  return response.json<{ id: string; lane: string }>();
}

async function statusOf(fixture: TestCoordinator, id: string) {
  const response = await fixture.coordinator.app.inject({
    method: 'GET',
    url: `/v1/rollouts/${id}`,
    headers: fixture.auth('viewer'),
  });
  return { code: response.statusCode, body: response.body };
}

describe('limits raised on the coordinator only', () => {
  it('a 130-step job under FLOWFLEET_MAX_STEPS=160 completes on a worker started without it, its status 200 throughout', async () => {
    // The worker child inherits this environment: it must not carry the override.
    expect(process.env['FLOWFLEET_MAX_STEPS']).toBeUndefined();
    const limits = coordinatorLimits({ FLOWFLEET_MAX_STEPS: '160' });
    expect(limits.maxSteps).toBe(160);
    const fixture = await startTestCoordinator(server.url, 'limits-raised', { limits });
    let worker: ChildWorker | undefined;
    try {
      const published = publishedLimitsOf(
        await fixture.redis.hgetall(fleetKeys(fixture.prefix).limits),
      );
      expect(published).toMatchObject({ published: true, limits: { maxSteps: 160 } });

      worker = spawnWorker(`w-limits-${fixture.prefix.slice(-6)}`, {
        REDIS_URL: server.url,
        FLOWFLEET_COORDINATOR_URL: fixture.url,
        FLOWFLEET_WORKER_TOKEN: TOKENS.worker,
        FLOWFLEET_PREFIX: fixture.prefix,
        FLOWFLEET_BACKEND: 'ort-cpu',
        FLOWFLEET_POLL_MS: '500',
        FLOWFLEET_DRAIN_TIMEOUT_MS: '2000',
      });
      const heartbeat = coordinatorKeys(fixture.prefix).heartbeat(worker.workerId);
      const child = worker;
      await waitFor(
        async () => {
          if (child.process.exitCode !== null) throw new Error(`worker exited:\n${child.output()}`);
          return (await fixture.redis.exists(heartbeat)) === 1;
        },
        'the worker to register',
        45_000,
      );

      const { id } = await enqueue(
        fixture,
        rolloutBody({ seeds: [11, 12], steps: 130, shape: { frames: 1, height: 8, width: 8 } }),
      );
      const seen: JobStatus[] = [];
      let last: JobStatus | undefined;
      const deadline = Date.now() + 90_000;
      while (last?.status !== 'completed') {
        const { code, body } = await statusOf(fixture, id);
        // Every answer on the way, not only the last one.
        expect(code, body).toBe(200);
        last = JobStatusSchema.parse(JSON.parse(body));
        seen.push(last);
        expect(last.status, JSON.stringify(last.error)).not.toBe('failed');
        if (Date.now() > deadline) throw new Error(`still ${last.status} after 90 s`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(last.summary?.steps).toBe(130);
      // RolloutFile v1's layout: [T][G].
      expect(last.summary?.logProbs).toHaveLength(130);
      expect(last.summary?.logProbs?.every((row) => row.length === 2)).toBe(true);
      expect(last.attempts).toBe(1);
      expect(seen.some((status) => status.status === 'active')).toBe(true);
    } finally {
      await worker?.stop('SIGTERM');
      await fixture.close();
    }
  }, 150_000);
});

describe('publishing', () => {
  it('only raises what the fleet accepts: a coordinator enforcing less leaves queued jobs runnable', async () => {
    const wide = await startTestCoordinator(server.url, 'limits-narrowed', {
      limits: { maxSteps: 160, maxGroupSize: 8 },
    });
    try {
      const key = fleetKeys(wide.prefix).limits;
      const narrow = await publishLimits(wide.redis, key, {
        ...DEFAULT_LIMITS,
        maxSteps: 50,
        maxGroupSize: 32,
      });
      expect(narrow.limits).toMatchObject({ maxSteps: 160, maxGroupSize: 32 });
      expect(publishedLimitsOf(await wide.redis.hgetall(key)).limits).toEqual(narrow.limits);
      // The coordinator still enforces its own limits at the edge.
      const refused = await wide.coordinator.app.inject({
        method: 'POST',
        url: '/v1/rollouts',
        headers: wide.auth('trainer'),
        payload: rolloutBody({ seeds: [1], steps: 161 }),
      });
      expect(refused.json()).toMatchObject({ code: 'PROTO_INVALID_REQUEST' });
    } finally {
      await wide.close();
    }
  });
});

describe('a stored payload that cannot be read', () => {
  it('is reported as a failed job with PROTO_INVALID_JOB by the status and the listing, never a 500', async () => {
    const fixture = await startTestCoordinator(server.url, 'limits-garbage');
    try {
      // A registered worker that never pulls: the jobs stay queued while their data is damaged.
      await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-idle'));
      const notJson = await enqueue(fixture, rolloutBody({ seeds: [1] }));
      const overLimit = await enqueue(fixture, rolloutBody({ seeds: [2] }));
      const intact = await enqueue(fixture, rolloutBody({ seeds: [3] }));
      const bull = coordinatorKeys(fixture.prefix).laneBullPrefix;
      await fixture.redis.hset(
        `${bull(notJson.lane)}:${notJson.lane}:${notJson.id}`,
        'data',
        '{"id": garbage',
      );
      const stored = JSON.parse(
        (await fixture.redis.hget(
          `${bull(overLimit.lane)}:${overLimit.lane}:${overLimit.id}`,
          'data',
        )) ?? '',
      ) as { request: { steps: number } };
      stored.request.steps = 5_000;
      await fixture.redis.hset(
        `${bull(overLimit.lane)}:${overLimit.lane}:${overLimit.id}`,
        'data',
        JSON.stringify(stored),
      );

      for (const { id } of [notJson, overLimit]) {
        const { code, body } = await statusOf(fixture, id);
        expect(code, body).toBe(200);
        const status = JobStatusSchema.parse(JSON.parse(body));
        expect(status).toMatchObject({
          id,
          status: 'failed',
          error: { code: 'PROTO_INVALID_JOB' },
        });
      }
      const fine = await statusOf(fixture, intact.id);
      expect(JobStatusSchema.parse(JSON.parse(fine.body)).status).toBe('queued');

      const listing = await fixture.coordinator.app.inject({
        method: 'GET',
        url: '/v1/rollouts',
        headers: fixture.auth('viewer'),
      });
      expect(listing.statusCode, listing.body).toBe(200);
      const { rollouts } = RolloutListSchema.parse(listing.json());
      const byId = new Map(rollouts.map((item) => [item.id, item]));
      expect(byId.get(notJson.id)).toMatchObject({
        status: 'failed',
        error: { code: 'PROTO_INVALID_JOB' },
      });
      expect(byId.get(notJson.id)?.model).toBeUndefined();
      expect(byId.get(overLimit.id)).toMatchObject({ status: 'failed' });
      expect(byId.get(intact.id)).toMatchObject({ status: 'queued', model: 'wan21-mini' });
    } finally {
      await fixture.close();
    }
  });
});
