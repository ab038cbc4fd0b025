// The coordinator's side of checkpoint syncs: Range downloads, the record and manifest of a
// sharded sync (digests taken at upload), what the edge refuses (a body naming both forms, a
// shard that is not safetensors, two shards holding one tensor), and a blob stored without a
// digest: taken from the stored bytes, or refused when they no longer hash to the blob's name.
import { createHash } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { canonicalJson, writeSafetensors } from '@flowfleet/formats';
import {
  WEIGHT_MANIFEST_FORMAT,
  WeightManifestSchema,
  WeightVersionRecordSchema,
  fleetKeys,
} from '@flowfleet/protocol';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { startTestCoordinator, type TestCoordinator } from './fixture.js';

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

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const f32 = (...values: number[]) => ({
  dtype: 'F32' as const,
  shape: [values.length],
  data: Float32Array.from(values),
});

async function upload(bytes: Uint8Array): Promise<string> {
  const response = await fetch(`${fixture.url}/v1/blobs`, {
    method: 'PUT',
    headers: { ...fixture.auth('trainer'), 'content-type': 'application/octet-stream' },
    body: bytes,
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { sha256: string }).sha256;
}

function sync(body: unknown) {
  return fixture.coordinator.app.inject({
    method: 'POST',
    url: '/v1/weights/dit/sync',
    headers: fixture.auth('trainer'),
    payload: body as Record<string, unknown>,
  });
}

function ranged(sha256: string, range: string) {
  return fixture.coordinator.app.inject({
    method: 'GET',
    url: `/v1/blobs/${sha256}`,
    headers: { ...fixture.auth('worker'), range },
  });
}

describe('checkpoint syncs at the coordinator', () => {
  it('serves one byte range per request, inside the blob', async () => {
    const bytes = Uint8Array.from({ length: 100 }, (_, i) => i);
    const sha256 = await upload(bytes);
    const part = await ranged(sha256, 'bytes=10-19');
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe('bytes 10-19/100');
    expect([...part.rawPayload]).toEqual([...bytes.subarray(10, 20)]);
    for (const range of ['bytes=90-100', 'bytes=5-', 'bytes=0-1,4-5', 'items=0-1', 'bytes=9-3']) {
      const refused = await ranged(sha256, range);
      expect(refused.statusCode, range).toBe(416);
      expect(refused.json().code).toBe('API_RANGE_NOT_SATISFIABLE');
    }
  });

  it('records a sharded sync with a manifest of every tensor digest taken at upload', async () => {
    const one = writeSafetensors({ a: f32(1, 2), b: f32(3) });
    const two = writeSafetensors({ c: f32(4, 5, 6) });
    const shards = [await upload(one), await upload(two)];
    const response = await sync({ version: 1, shards: shards.map((sha256) => ({ sha256 })) });
    expect(response.statusCode, response.body).toBe(202);
    const accepted = response.json();
    expect(accepted.sizeBytes).toBe(one.length + two.length);
    const keys = fleetKeys(fixture.prefix);
    const record = WeightVersionRecordSchema.parse(
      JSON.parse((await fixture.redis.hget(keys.weights('dit'), 'v:1')) ?? ''),
    );
    expect(record).toMatchObject({
      sha256: accepted.sha256,
      kind: 'full',
      shards: [
        { sha256: shards[0], sizeBytes: one.length },
        { sha256: shards[1], sizeBytes: two.length },
      ],
    });
    // The manifest is a content-addressed blob; the version's content id is its sha256.
    const manifestBytes = (
      await fixture.coordinator.app.inject({
        method: 'GET',
        url: `/v1/blobs/${record.manifest!.sha256}`,
        headers: fixture.auth('worker'),
      })
    ).rawPayload;
    expect(sha(manifestBytes)).toBe(accepted.sha256);
    const manifest = WeightManifestSchema.parse(JSON.parse(manifestBytes.toString('utf8')));
    expect(canonicalJson(manifest)).toBe(manifestBytes.toString('utf8'));
    expect(manifest.format).toBe(WEIGHT_MANIFEST_FORMAT);
    const c = manifest.tensors['c']!;
    expect(c).toMatchObject({ shard: 1, dtype: 'F32', shape: [3] });
    expect(c.sha256).toBe(sha(two.subarray(c.begin, c.end)));
    expect([...new Float32Array(two.slice(c.begin, c.end).buffer)]).toEqual([4, 5, 6]);
  });

  it('refuses a body naming both forms, a shard that is not safetensors and overlapping shards', async () => {
    const one = await upload(writeSafetensors({ a: f32(1) }));
    const both = await sync({ version: 1, sha256: one, shards: [{ sha256: one }] });
    expect(both.statusCode).toBe(400);
    expect(both.json().code).toBe('API_INVALID_BODY');
    const text = await upload(new TextEncoder().encode('not a checkpoint'));
    const notSafetensors = await sync({ version: 1, shards: [{ sha256: one }, { sha256: text }] });
    expect(notSafetensors.statusCode).toBe(400);
    expect(notSafetensors.json()).toMatchObject({
      code: 'FMT_SAFETENSORS_INVALID',
      details: { sha256: text, role: 'shard 1' },
    });
    const again = await upload(writeSafetensors({ a: f32(2), z: f32(3) }));
    const overlap = await sync({ version: 1, shards: [{ sha256: one }, { sha256: again }] });
    expect(overlap.json()).toMatchObject({
      code: 'FMT_CHECKPOINT_INVALID',
      details: { reason: 'shards-overlap', problems: ['a is in shard 0 and shard 1'] },
    });
    expect(await fixture.redis.exists(fleetKeys(fixture.prefix).weights('dit'))).toBe(0);
  });

  it('takes the digest of a blob stored without one, unless its bytes changed', async () => {
    const bytes = writeSafetensors({ a: f32(1), b: f32(2) });
    const sha256 = await upload(bytes);
    await rm(join(fixture.blobDir, 'digests', `${sha256}.json`));
    expect((await sync({ version: 1, shards: [{ sha256 }] })).statusCode).toBe(202);
    const other = writeSafetensors({ c: f32(1) });
    const corrupt = await upload(other);
    await rm(join(fixture.blobDir, 'digests', `${corrupt}.json`));
    const changed = Buffer.from(other);
    changed[changed.length - 1] = 7;
    await writeFile(join(fixture.blobDir, 'sha256', corrupt), changed);
    const refused = await sync({ version: 2, shards: [{ sha256: corrupt }] });
    expect(refused.statusCode).toBe(500);
    expect(refused.json().code).toBe('API_BLOB_CORRUPT');
  });
});
