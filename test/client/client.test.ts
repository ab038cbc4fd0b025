import { createHash } from 'node:crypto';
import { FlowfleetClient, createClient, type FlowfleetClient as Client } from '@flowfleet/client';
import { writeSafetensors } from '@flowfleet/formats';
import { JobStatusSchema } from '@flowfleet/protocol';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  fakeManifest,
  registerFakeWorker,
  startTestCoordinator,
  type TestCoordinator,
} from '../coordinator/fixture.js';
import { freePort, startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { clientFor, rejection } from './client-helpers.js';

let server: RedisServer;
let fixture: TestCoordinator;
let trainer: Client;

beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});
beforeEach(async (context) => {
  fixture = await startTestCoordinator(server.url, context.task.name, {
    limits: { maxGroupSize: 8 },
  });
  trainer = clientFor(fixture, 'trainer');
});
afterEach(async () => {
  await fixture?.close();
});

const REQUEST = { model: 'wan21-mini', prompt: 'a red fox in snow', seeds: [1, 2] };

describe('FlowfleetClient against a real coordinator', () => {
  it('does no I/O until a method is called', async () => {
    // A client for a port nobody listens on builds fine; only the call fails.
    const port = await freePort();
    const idle = FlowfleetClient.create({ baseUrl: `http://127.0.0.1:${port}`, retry: false });
    expect(idle.baseUrl).toBe(`http://127.0.0.1:${port}`);
    const error = await rejection(idle.health());
    expect(error.code).toBe('CLIENT_UNREACHABLE');
    expect(error.cause).toBeInstanceOf(Error);
    expect(error.details).toMatchObject({ method: 'GET', url: `http://127.0.0.1:${port}/healthz` });
  });

  it('enqueues a rollout and reads its status, lanes, matrix and fleet', async () => {
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-1'));
    const enqueued = await trainer.enqueueRollouts({ ...REQUEST, steps: 3 });
    expect(enqueued).toMatchObject({ status: 'queued', eligibleWorkers: 1 });
    expect(enqueued.lane).toMatch(/^lane-[0-9a-f]{16}$/);

    const status = await trainer.status(enqueued.id);
    expect(JobStatusSchema.parse(status)).toMatchObject({
      id: enqueued.id,
      lane: enqueued.lane,
      status: 'queued',
      progress: { step: 0, steps: 3 },
    });
    const { lanes } = await trainer.lanes();
    expect(lanes.map((l) => l.lane)).toEqual([enqueued.lane]);
    expect(lanes[0]).toMatchObject({ backlog: 1, eligibleWorkers: 1 });
    const serving = await trainer.laneWorkers(enqueued.lane);
    expect(serving.workers.map((w) => w.workerId)).toEqual(['w-1']);
    const unknownLane = await rejection(trainer.laneWorkers('lane-00000000000000ff'));
    expect(unknownLane.code).toBe('API_LANE_NOT_FOUND');
    const matrix = await trainer.matrix();
    expect(matrix.liveWorkers).toBe(1);
    expect(matrix.cells).toContainEqual(
      expect.objectContaining({ registry: 'kernel', name: 'flow_sde_step', liveWorkers: 1 }),
    );
    expect(matrix.lanes[0]?.lane).toBe(enqueued.lane);
    const fleet = await trainer.fleet();
    expect(fleet).toMatchObject({ live: 1, dead: 0 });
    expect(fleet.workers[0]).toMatchObject({ workerId: 'w-1', alive: true, concurrency: 2 });
    const scaling = await trainer.scaling();
    expect(scaling.classes).toEqual([
      expect.objectContaining({
        deviceClass: 'cpu/x86-64-v3',
        exclusiveBacklog: 1,
        desiredReplicas: 1,
      }),
    ]);
    const one = await trainer.scaling({ deviceClass: 'cpu/x86-64-v3' });
    expect(one.classes).toHaveLength(1);
    const unknown = await rejection(trainer.scaling({ deviceClass: 'cuda/sm90' }));
    expect(unknown.code).toBe('API_DEVICE_CLASS_NOT_FOUND');
  });

  it('enqueues once per Idempotency-Key, however often the request is sent', async () => {
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-1'));
    const key = '6F1C2A8E-8A51-4C5E-9D0B-2F3C4D5E6F70';
    const first = await trainer.enqueueRollouts(REQUEST, { idempotencyKey: key });
    const again = await trainer.enqueueRollouts(REQUEST, { idempotencyKey: key });
    expect(first.id).toBe(`${first.lane}.${key.toLowerCase()}`);
    expect(again.id).toBe(first.id);
    const other = await trainer.enqueueRollouts(REQUEST);
    expect(other.id).not.toBe(first.id);
    const { lanes } = await trainer.lanes();
    expect(lanes[0]).toMatchObject({ lane: first.lane, backlog: 2 });
    const bad = await rejection(trainer.enqueueRollouts(REQUEST, { idempotencyKey: 'retry-1' }));
    expect(bad.code).toBe('PROTO_INVALID_REQUEST');
  });

  it('binds an Idempotency-Key to its request: another request under it is refused, nothing added', async () => {
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-1'));
    const key = '0b7e9a52-3c1d-4f6e-8a2b-9c0d1e2f3a4b';
    const first = await trainer.enqueueRollouts(REQUEST, { idempotencyKey: key });
    // The same key with other seeds (same lane) and with another sampler (another lane).
    for (const other of [
      { ...REQUEST, seeds: [7, 8] },
      { ...REQUEST, sampler: 'ode' as const },
    ]) {
      const conflict = await rejection(trainer.enqueueRollouts(other, { idempotencyKey: key }));
      expect(conflict.code).toBe('API_IDEMPOTENCY_CONFLICT');
    }
    const { lanes } = await trainer.lanes();
    expect(lanes.map((lane) => [lane.lane, lane.backlog])).toEqual([[first.lane, 1]]);
  });

  it('answers a repeated enqueue with its original answer even after the capacity that took it has gone', async () => {
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-1'));
    const key = '5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a';
    const first = await trainer.enqueueRollouts(REQUEST, { idempotencyKey: key });
    await fixture.redis.del(`{${fixture.prefix}}:heartbeat:w-1`);
    const fresh = await rejection(trainer.enqueueRollouts({ ...REQUEST, seeds: [3] }));
    expect(fresh.code).toBe('API_NO_CAPACITY');
    const again = await trainer.enqueueRollouts(REQUEST, { idempotencyKey: key });
    // The original answer (the IETF draft's semantics), not one recomputed now.
    expect(again).toEqual(first);
    expect(first.eligibleWorkers).toBe(1);
  });

  it('enqueues a round: one rollout per prompt, in order, sharing the common settings', async () => {
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-1'));
    const prompts = ['a fox', 'a cat', 'a crab', 'a heron', 'an owl', 'a moth'];
    const round = await trainer.enqueueRound(
      prompts.map((prompt, i) => ({ prompt, seeds: [10 * i, 10 * i + 1] })),
      { model: 'wan21-mini', steps: 2, sampler: 'sde' },
    );
    expect(round).toHaveLength(prompts.length);
    expect(new Set(round.map((r) => r.id)).size).toBe(prompts.length);
    expect(new Set(round.map((r) => r.lane)).size).toBe(1);
    const statuses = await Promise.all(round.map((r) => trainer.status(r.id)));
    expect(statuses.map((s) => s.progress.steps)).toEqual(prompts.map(() => 2));
  });

  it('reports the ids already enqueued when a round fails part-way', async () => {
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-1'));
    const error = await rejection(
      trainer.enqueueRound(
        [
          { prompt: 'fine', seeds: [1] },
          { prompt: 'duplicate seeds', seeds: [2, 2] },
        ],
        { model: 'wan21-mini' },
      ),
    );
    expect(error.code).toBe('PROTO_INVALID_REQUEST');
    const enqueued = (error.details as { enqueued?: { id: string }[] }).enqueued;
    expect(enqueued).toHaveLength(1);
    expect((await trainer.status(enqueued?.[0]?.id ?? '')).status).toBe('queued');
  });

  it('uploads a blob (sha256 checked), downloads it, syncs it and reports the version', async () => {
    const bytes = writeSafetensors({
      w: { dtype: 'F32', shape: [2], data: Float32Array.of(1, 2) },
    });
    const stored = await trainer.uploadBlob(bytes);
    expect(stored).toEqual({
      sha256: createHash('sha256').update(bytes).digest('hex'),
      sizeBytes: bytes.byteLength,
    });
    expect(Buffer.from(await trainer.downloadBlob(stored.sha256)).equals(bytes)).toBe(true);
    const accepted = await trainer.syncWeights('dit', 1, stored.sha256);
    expect(accepted).toMatchObject({ component: 'dit', version: 1, previous: null });
    const report = await trainer.weights('dit', { limit: 5 });
    // Synced, loaded by no worker yet: the latest version, not the current one.
    expect(report.current).toBeNull();
    expect(report.latest).toEqual({ version: 1, status: 'pending' });
    expect(report.versions['1']).toMatchObject({ sha256: stored.sha256, status: 'pending' });
    const stale = await rejection(trainer.syncWeights('dit', 1, stored.sha256));
    expect(stale.code).toBe('API_STALE_VERSION');
    expect(stale.details).toMatchObject({ latest: 1, requested: 1 });
  });

  it('refuses a blob whose answered sha256 differs from the local one (CLIENT_BLOB_MISMATCH)', async () => {
    // A proxy that rewrites the answer stands in for a corrupting path to the coordinator.
    const lying = clientFor(fixture, 'trainer', {
      fetch: async (url, init) => {
        const response = await fetch(url, init);
        const body = (await response.json()) as { sha256: string; sizeBytes: number };
        return Response.json({ ...body, sha256: '0'.repeat(64) }, { status: response.status });
      },
    });
    const error = await rejection(lying.uploadBlob(new Uint8Array([1, 2, 3])));
    expect(error.code).toBe('CLIENT_BLOB_MISMATCH');
    expect(error.details).toMatchObject({
      expected: {
        sha256: createHash('sha256')
          .update(new Uint8Array([1, 2, 3]))
          .digest('hex'),
      },
      received: { sha256: '0'.repeat(64) },
    });
  });

  it('reads health, metrics and the OpenAPI document', async () => {
    expect(await createClient({ baseUrl: fixture.url }).health()).toEqual({
      status: 'ok',
      redis: 'up',
    });
    expect(await clientFor(fixture, 'viewer').metrics()).toMatch(/flowfleet_workers/);
    const openapi = await trainer.openapi();
    expect(openapi['openapi']).toMatch(/^3\.1/);
    expect(Object.keys(openapi['paths'] as object)).toContain('/v1/rollouts');
  });
});

describe('error mapping', () => {
  it('maps 401 and 403 onto API_UNAUTHORIZED and API_FORBIDDEN', async () => {
    const anonymous = FlowfleetClient.create({ baseUrl: fixture.url });
    expect((await rejection(anonymous.fleet())).code).toBe('API_UNAUTHORIZED');
    const wrong = FlowfleetClient.create({ baseUrl: fixture.url, token: 'x'.repeat(32) });
    expect((await rejection(wrong.lanes())).code).toBe('API_UNAUTHORIZED');
    const viewer = clientFor(fixture, 'viewer');
    const forbidden = await rejection(viewer.enqueueRollouts(REQUEST));
    expect(forbidden.code).toBe('API_FORBIDDEN');
    expect(forbidden.httpStatus).toBe(403);
  });

  it("maps 409 API_NO_CAPACITY with the server's details and enqueues nothing", async () => {
    const error = await rejection(trainer.enqueueRollouts(REQUEST));
    expect(error.code).toBe('API_NO_CAPACITY');
    expect(error.details).toMatchObject({ workers: [] });
    expect((await trainer.lanes()).lanes).toEqual([]);
  });

  it('maps 404s: unknown job, no result yet, unknown blob, unknown route', async () => {
    expect((await rejection(trainer.status('no-such-job'))).code).toBe('API_JOB_NOT_FOUND');
    expect((await rejection(trainer.getResult('no-such-job'))).code).toBe('API_JOB_NOT_FOUND');
    const held = await trainer.enqueueRollouts({ ...REQUEST, waitForCapacity: true });
    const noResult = await rejection(trainer.getResultBytes(held.id));
    expect(noResult.code).toBe('API_RESULT_NOT_FOUND');
    expect(noResult.details).toEqual({ id: held.id });
    expect((await rejection(trainer.downloadBlob('f'.repeat(64)))).code).toBe('API_BLOB_NOT_FOUND');
    const elsewhere = clientFor(fixture, 'trainer', { baseUrl: `${fixture.url}/not-here` });
    expect((await rejection(elsewhere.health())).code).toBe('API_ROUTE_NOT_FOUND');
  });

  it('maps bad input onto the coded 400s', async () => {
    const invalid = await rejection(trainer.enqueueRollouts({ ...REQUEST, steps: 10_000 }));
    expect(invalid.code).toBe('PROTO_INVALID_REQUEST');
    expect((invalid.details as { issues: unknown[] }).issues.length).toBeGreaterThan(0);
    expect((await rejection(trainer.status('bad:id'))).code).toBe('API_INVALID_PARAMS');
    expect((await rejection(trainer.syncWeights('dit', 1, 'f'.repeat(64)))).code).toBe(
      'API_BLOB_NOT_FOUND',
    );
  });
});
