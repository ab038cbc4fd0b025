// Uploads streamed from a file (`fileBody` → `uploadBlobStream`, what `pushCheckpoint` does per
// shard): one chunk in memory at a time, so a shard may pass readFile's 2 GiB; the coordinator's
// blob limit (FLOWFLEET_MAX_BLOB_BYTES) still decides. Small files around a small limit here.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileBody, pushCheckpoint, type FlowfleetClient } from '@flowfleet/client';
import { writeSafetensors } from '@flowfleet/formats';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestCoordinator, type TestCoordinator } from '../coordinator/fixture.js';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { clientFor, rejection } from './client-helpers.js';

/** Four of createReadStream's 64 KiB chunks: the body is sent as it is read. */
const MAX_BLOB_BYTES = 256 * 1024;

let server: RedisServer;
let fixture: TestCoordinator;
let trainer: FlowfleetClient;
let dir: string;

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
  trainer = clientFor(fixture, 'trainer');
  dir = await mkdtemp(join(tmpdir(), 'ff-stream-upload-'));
});
afterEach(async () => {
  await trainer?.close();
  await fixture?.close();
  await rm(dir, { recursive: true, force: true });
});

async function fileOf(name: string, bytes: Uint8Array): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, bytes);
  return path;
}

describe('streamed blob uploads', () => {
  it('accepts a file of exactly the limit, streamed, and stores its bytes', async () => {
    const bytes = randomBytes(MAX_BLOB_BYTES);
    const body = await fileBody(await fileOf('at', bytes));
    // Read as it is sent: chunks of at most 64 KiB, never the file whole.
    const chunks: number[] = [];
    for await (const chunk of body.open()) chunks.push(chunk.byteLength);
    expect(chunks.length).toBeGreaterThanOrEqual(4);
    expect(Math.max(...chunks)).toBeLessThanOrEqual(64 * 1024);
    expect(body.readBack()?.sizeBytes).toBe(MAX_BLOB_BYTES);
    const stored = await trainer.uploadBlobStream(body);
    expect(stored).toEqual({
      sha256: createHash('sha256').update(bytes).digest('hex'),
      sizeBytes: MAX_BLOB_BYTES,
    });
    expect(Buffer.from(await trainer.downloadBlob(stored.sha256)).equals(bytes)).toBe(true);
  });

  it('refuses a file one byte over the limit with API_BLOB_TOO_LARGE and keeps nothing', async () => {
    const path = await fileOf('over', randomBytes(MAX_BLOB_BYTES + 1));
    const error = await rejection(trainer.uploadBlobStream(await fileBody(path)));
    expect(error.code).toBe('API_BLOB_TOO_LARGE');
    expect(await readdir(join(fixture.blobDir, 'sha256'))).toEqual([]);
  });

  it('pushCheckpoint streams each shard: a single file over the limit is refused, not read whole', async () => {
    const elements = MAX_BLOB_BYTES / 4 + 1;
    const file = writeSafetensors({
      w: { dtype: 'F32', shape: [elements], data: new Float32Array(elements) },
    });
    expect(file.byteLength).toBeGreaterThan(MAX_BLOB_BYTES);
    const path = await fileOf('model.safetensors', file);
    const error = await rejection(pushCheckpoint(trainer, 'dit', path));
    expect(error.code).toBe('API_BLOB_TOO_LARGE');
  });

  it('reports a file it cannot read as FMT_FILE_IO', async () => {
    const error = await rejection(fileBody(join(dir, 'missing')));
    expect(error.code).toBe('FMT_FILE_IO');
  });
});
