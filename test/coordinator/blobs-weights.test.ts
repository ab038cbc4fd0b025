import { createHash, randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SyncAcceptedSchema, WeightReportSchema } from '@flowfleet/coordinator';
import { writeSafetensors } from '@flowfleet/formats';
import { fleetKeys, RolloutJobSchema, WeightSyncSchema, type SyncAck } from '@flowfleet/protocol';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import {
  fakeManifest,
  registerFakeWorker,
  startTestCoordinator,
  waitFor,
  type TestCoordinator,
} from './fixture.js';

const MAX_BLOB_BYTES = 64 * 1024;

let server: RedisServer;
let fixture: TestCoordinator;

beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});
beforeEach(async (context) => {
  fixture = await startTestCoordinator(server.url, context.task.name, {
    limits: { maxBlobBytes: MAX_BLOB_BYTES },
  });
});
afterEach(async () => {
  await fixture?.close();
});

async function upload(bytes: Buffer): Promise<Response> {
  return fetch(`${fixture.url}/v1/blobs`, {
    method: 'PUT',
    headers: { ...fixture.auth('trainer'), 'content-type': 'application/octet-stream' },
    body: bytes,
  });
}

/** A small safetensors file (what a sync names: one rule for every blob of a version). */
function weightsFile(value = 1): Buffer {
  return Buffer.from(
    writeSafetensors({ w: { dtype: 'F32', shape: [2], data: Float32Array.from([value, 2]) } }),
  );
}

async function sync(component: string, body: unknown) {
  return fixture.coordinator.app.inject({
    method: 'POST',
    url: `/v1/weights/${component}/sync`,
    headers: fixture.auth('trainer'),
    payload: body as Record<string, unknown>,
  });
}

describe('blob store over HTTP', () => {
  it('stores by sha256 and serves the same bytes back', async () => {
    const bytes = randomBytes(40_000);
    const response = await upload(bytes);
    expect(response.status).toBe(201);
    const stored = (await response.json()) as { sha256: string; sizeBytes: number };
    expect(stored).toEqual({
      sha256: createHash('sha256').update(bytes).digest('hex'),
      sizeBytes: bytes.length,
    });
    const again = await upload(bytes);
    expect(((await again.json()) as { sha256: string }).sha256).toBe(stored.sha256);

    for (const role of ['worker', 'trainer'] as const) {
      const download = await fetch(`${fixture.url}/v1/blobs/${stored.sha256}`, {
        headers: fixture.auth(role),
      });
      expect(download.status).toBe(200);
      expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
    }
  });

  it('refuses an oversize upload with 413 API_BLOB_TOO_LARGE and keeps nothing', async () => {
    const response = await upload(randomBytes(MAX_BLOB_BYTES + 1));
    expect(response.status).toBe(413);
    expect(((await response.json()) as { code: string }).code).toBe('API_BLOB_TOO_LARGE');
    expect(await readdir(join(fixture.blobDir, 'sha256'))).toEqual([]);
    expect(await readdir(join(fixture.blobDir, 'tmp'))).toEqual([]);
  });

  it('enforces the limit on a chunked upload without Content-Length too', async () => {
    const chunk = randomBytes(16 * 1024);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 6; i++) controller.enqueue(chunk);
        controller.close();
      },
    });
    const response = await fetch(`${fixture.url}/v1/blobs`, {
      method: 'PUT',
      headers: { ...fixture.auth('trainer'), 'content-type': 'application/octet-stream' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(((await response.json()) as { code: string }).code).toBe('API_BLOB_TOO_LARGE');
    expect(await readdir(join(fixture.blobDir, 'sha256'))).toEqual([]);
  });

  it('answers 404 API_BLOB_NOT_FOUND and 400 for a malformed digest', async () => {
    const missing = await fetch(`${fixture.url}/v1/blobs/${'0'.repeat(64)}`, {
      headers: fixture.auth('worker'),
    });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('API_BLOB_NOT_FOUND');
    const malformed = await fetch(`${fixture.url}/v1/blobs/..%2F..%2Fetc%2Fpasswd`, {
      headers: fixture.auth('worker'),
    });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { code: string }).code).toBe('API_INVALID_PARAMS');
  });
});

describe('weight sync', () => {
  it('records in the weights hash and publishes on the channel; versions must increase', async () => {
    const keys = fleetKeys(fixture.prefix);
    const subscriber = new Redis(server.url);
    const received: unknown[] = [];
    subscriber.on('message', (_channel, message: string) => received.push(JSON.parse(message)));
    await subscriber.subscribe(keys.syncChannel);
    try {
      const blob = (await (await upload(weightsFile())).json()) as {
        sha256: string;
        sizeBytes: number;
      };
      const first = await sync('dit', { version: 1, sha256: blob.sha256 });
      expect(first.statusCode).toBe(202);
      SyncAcceptedSchema.parse(first.json());
      expect(first.json()).toMatchObject({ component: 'dit', version: 1, previous: null });

      const expected = {
        component: 'dit',
        version: 1,
        sha256: blob.sha256,
        sizeBytes: blob.sizeBytes,
      };
      await waitFor(async () => received.length === 1, 'the sync message');
      expect(WeightSyncSchema.parse(received[0])).toEqual(expected);
      expect(await fixture.redis.hget(keys.weights('dit'), 'latest')).toBe('1');

      for (const version of [1, 0]) {
        const stale = await sync('dit', { version, sha256: blob.sha256 });
        expect(stale.statusCode).toBe(version === 1 ? 409 : 400);
        expect(stale.json().code).toBe(version === 1 ? 'API_STALE_VERSION' : 'API_INVALID_BODY');
      }
      const next = await sync('dit', { version: 5, sha256: blob.sha256 });
      expect(next.json()).toMatchObject({ version: 5, previous: 1 });
      const older = await sync('dit', { version: 4, sha256: blob.sha256 });
      expect(older.statusCode).toBe(409);
      expect(older.json().details).toMatchObject({ latest: 5, requested: 4 });
      // Components are independent.
      expect((await sync('text_encoder', { version: 1, sha256: blob.sha256 })).statusCode).toBe(
        202,
      );
      await waitFor(async () => received.length === 3, 'three sync messages');
    } finally {
      await subscriber.quit();
    }
  });

  it('refuses a sync whose blob was never uploaded, and changes nothing', async () => {
    const response = await sync('dit', { version: 1, sha256: 'f'.repeat(64) });
    expect(response.statusCode).toBe(404);
    expect(response.json().code).toBe('API_BLOB_NOT_FOUND');
    expect(await fixture.redis.exists(fleetKeys(fixture.prefix).weights('dit'))).toBe(0);
  });

  it('lets only one of several concurrent syncs of the same version win', async () => {
    const blob = (await (await upload(weightsFile())).json()) as { sha256: string };
    const responses = await Promise.all(
      Array.from({ length: 5 }, () => sync('dit', { version: 2, sha256: blob.sha256 })),
    );
    expect(responses.map((r) => r.statusCode).sort()).toEqual([202, 409, 409, 409, 409]);
  });

  it('reports per version who holds it, each ack with its code; current is what a live worker holds', async () => {
    const keys = fleetKeys(fixture.prefix);
    const blob = (await (await upload(weightsFile())).json()) as { sha256: string };
    const holding = (dit: number) => fakeManifest('w-a', { weights: { dit, text_encoder: 0 } });
    await registerFakeWorker(fixture.redis, fixture.prefix, holding(1));
    await registerFakeWorker(fixture.redis, fixture.prefix, fakeManifest('w-b'));
    await sync('dit', { version: 1, sha256: blob.sha256 });
    await sync('dit', { version: 2, sha256: blob.sha256 });
    const ack = (workerId: string, version: number, status: SyncAck['status']): string =>
      JSON.stringify({
        workerId,
        component: 'dit',
        version,
        status,
        ...(status === 'ok' ? {} : { reason: 'sha256 mismatch', code: 'WORKER_BLOB_REFUSED' }),
        at: new Date().toISOString(),
      } satisfies SyncAck);
    await fixture.redis.hset(keys.acks('dit', 1), 'w-a', ack('w-a', 1, 'ok'));
    await fixture.redis.hset(keys.acks('dit', 2), 'w-a', ack('w-a', 2, 'refused'));

    const report = async () => {
      const body = (
        await fixture.coordinator.app.inject({
          method: 'GET',
          url: '/v1/weights/dit',
          headers: fixture.auth('viewer'),
        })
      ).json();
      WeightReportSchema.parse(body);
      return body;
    };
    let body = await report();
    expect(body.current).toBe(1);
    expect(body.latest).toEqual({ version: 2, status: 'pending' });
    expect(body.versions['1']).toMatchObject({
      status: 'loaded',
      holders: ['w-a'],
      acks: { 'w-a': 'ok' },
      codes: {},
    });
    expect(body.versions['2']).toMatchObject({
      status: 'pending',
      holders: [],
      acks: { 'w-a': 'refused' },
      codes: { 'w-a': 'WORKER_BLOB_REFUSED' },
      reasons: { 'w-a': 'sha256 mismatch' },
    });
    await fixture.redis.hset(keys.acks('dit', 2), 'w-b', ack('w-b', 2, 'failed'));
    body = await report();
    expect(body.versions['2'].status).toBe('failed');
    expect(body.latest).toEqual({ version: 2, status: 'failed' });
    expect(body.versions['2'].acks).toEqual({ 'w-a': 'refused', 'w-b': 'failed' });
    // The only holder of v1 dies: v1 was loaded and nobody holds it any more.
    await fixture.redis.del(keys.heartbeat('w-a'));
    await waitFor(async () => (await report()).versions['1'].status === 'retired', 'v1 retired');
    expect((await report()).current).toBeNull();
  });

  it('turns maxStaleness into a min against the newest version a live worker holds', async () => {
    const blob = (await (await upload(weightsFile())).json()) as { sha256: string };
    const holding = (dit: number) => fakeManifest('w-a', { weights: { dit, text_encoder: 0 } });
    await registerFakeWorker(fixture.redis, fixture.prefix, holding(0));
    const answer = (weights: Record<string, unknown>) =>
      fixture.coordinator.app.inject({
        method: 'POST',
        url: '/v1/rollouts',
        headers: fixture.auth('trainer'),
        payload: { model: 'wan21-mini', prompt: 'p', seeds: [1], weights },
      });
    const enqueue = async (weights: Record<string, unknown>) => {
      const response = await answer(weights);
      expect(response.statusCode, response.body).toBe(202);
      const { id, lane } = response.json<{ id: string; lane: string }>();
      const job = await fixture.coordinator.services.queues.get(lane).getJob(id);
      return RolloutJobSchema.parse(job?.data);
    };
    // Nothing synced yet: version 0 is the only one, so any bound holds (no requirement).
    expect((await enqueue({ dit: { maxStaleness: 0 } })).weights).toEqual({});
    for (const version of [1, 2, 3]) await sync('dit', { version, sha256: blob.sha256 });
    // Synced, not loaded: on-policy is still what the worker holds (v0, no requirement), while
    // a job on v3 is accepted — the worker has not answered v3, it loads it first.
    expect((await enqueue({ dit: { maxStaleness: 0 } })).weights).toEqual({});
    expect((await enqueue({ dit: { exact: 3 } })).weights).toEqual({ dit: { exact: 3 } });
    await registerFakeWorker(fixture.redis, fixture.prefix, holding(3));
    // The fleet read is shared for up to a second.
    await waitFor(
      async () => JSON.stringify((await enqueue({ dit: { maxStaleness: 0 } })).weights) !== '{}',
      'the worker to hold v3',
    );
    const onPolicy = await enqueue({ dit: { maxStaleness: 0 } });
    expect(onPolicy.weights).toEqual({ dit: { min: 3 } });
    // The request as sent is kept beside what a worker enforces.
    expect(onPolicy.request.weights).toEqual({ dit: { maxStaleness: 0 } });
    expect((await enqueue({ dit: { maxStaleness: 1 } })).weights).toEqual({ dit: { min: 2 } });
    expect((await enqueue({ dit: { maxStaleness: 5 } })).weights).toEqual({});
    // v2 is behind what the worker holds: no worker can go back to it.
    const past = await answer({ dit: { exact: 2 } });
    expect(past.statusCode).toBe(409);
    expect(past.json()).toMatchObject({
      code: 'API_WEIGHT_VERSION_UNAVAILABLE',
      details: { unmet: [{ component: 'dit', current: 3, latest: 3 }] },
    });
    await sync('text_encoder', { version: 1, sha256: blob.sha256 });
    expect((await enqueue({ dit: { maxStaleness: 2 }, text_encoder: { min: 1 } })).weights).toEqual(
      { dit: { min: 1 }, text_encoder: { min: 1 } },
    );
  });

  it('reports a never-synced component as current null', async () => {
    const response = await fixture.coordinator.app.inject({
      method: 'GET',
      url: '/v1/weights/vae',
      headers: fixture.auth('viewer'),
    });
    expect(response.json()).toEqual({
      component: 'vae',
      current: null,
      latest: null,
      versions: {},
    });
  });
});
