import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isFlowfleetError } from '@flowfleet/errors';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FsBlobStore } from './blob-store.js';

let root: string;
let store: FsBlobStore;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'flowfleet-blobs-'));
  store = new FsBlobStore(root);
  await store.init();
});
afterEach(async () => {
  await store.close();
  await rm(root, { recursive: true, force: true });
});

async function readAll(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function* chunked(...parts: string[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield Buffer.from(part);
}

describe('FsBlobStore', () => {
  it('stores content-addressed blobs and reads them back', async () => {
    const stored = await store.putBlob(chunked('hello ', 'world'), 100);
    expect(stored).toEqual({
      sha256: createHash('sha256').update('hello world').digest('hex'),
      sizeBytes: 11,
    });
    const opened = await store.openBlob(stored.sha256);
    expect(opened?.sizeBytes).toBe(11);
    expect((await readAll(opened!.stream)).toString()).toBe('hello world');
    expect(await store.statBlob('0'.repeat(64))).toBeUndefined();
    expect(await readdir(join(root, 'tmp'))).toEqual([]);
  });

  it('refuses past the limit mid-stream and leaves no temp file', async () => {
    const error = await store.putBlob(chunked('12345', '67890', 'x'), 10).catch((e: unknown) => e);
    expect(isFlowfleetError(error, 'API_BLOB_TOO_LARGE')).toBe(true);
    expect(await readdir(join(root, 'tmp'))).toEqual([]);
    expect(await readdir(join(root, 'sha256'))).toEqual([]);
  });

  it('writes a result once even under concurrent writers', async () => {
    const writes = await Promise.all(
      Array.from({ length: 6 }, () =>
        store.putResult('job-1', 'summary.json', chunked('{"a":1}'), 100),
      ),
    );
    expect(writes.filter((w) => w.status === 'created')).toHaveLength(1);
    expect(writes.filter((w) => w.status === 'unchanged')).toHaveLength(5);
    const conflict = await store
      .putResult('job-1', 'summary.json', chunked('{"a":2}'), 100)
      .catch((e: unknown) => e);
    expect(isFlowfleetError(conflict, 'API_RESULT_CONFLICT')).toBe(true);
    expect(
      (await readAll((await store.openResult('job-1', 'summary.json'))!.stream)).toString(),
    ).toBe('{"a":1}');
    expect(await store.openResult('job-2', 'summary.json')).toBeUndefined();
    expect(await readdir(join(root, 'tmp'))).toEqual([]);
  });

  it('writes in-memory results once under concurrent writers, conflicts refused', async () => {
    const bytes = Buffer.from('tensor bytes');
    const writes = await Promise.all(
      Array.from({ length: 8 }, () => store.putResult('job-m', 'result.safetensors', [bytes], 100)),
    );
    expect(writes.filter((w) => w.status === 'created')).toHaveLength(1);
    expect(writes.filter((w) => w.status === 'unchanged')).toHaveLength(7);
    expect(writes[0]).toMatchObject({
      sha256: createHash('sha256').update(bytes).digest('hex'),
      sizeBytes: bytes.byteLength,
    });
    const conflict = await store
      .putResult('job-m', 'result.safetensors', [Buffer.from('other bytes')], 100)
      .catch((e: unknown) => e);
    expect(isFlowfleetError(conflict, 'API_RESULT_CONFLICT')).toBe(true);
    const tooLarge = await store
      .putResult('job-n', 'result.safetensors', [Buffer.alloc(101)], 100)
      .catch((e: unknown) => e);
    expect(isFlowfleetError(tooLarge, 'API_BLOB_TOO_LARGE')).toBe(true);
    expect(
      (await readAll((await store.openResult('job-m', 'result.safetensors'))!.stream)).toString(),
    ).toBe('tensor bytes');
    expect(await store.openResult('job-n', 'result.safetensors')).toBeUndefined();
    expect(await readdir(join(root, 'tmp'))).toEqual([]);
  });

  it('reports a filesystem error with its code, leaves no temp file and keeps working', async () => {
    // A file where the job's directory should be: the link into it fails.
    await writeFile(join(root, 'results', 'job-f'), 'not a directory');
    const error = await store
      .putResult('job-f', 'summary.json', [Buffer.from('{}')], 100)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as NodeJS.ErrnoException).code).toBe('ENOTDIR');
    expect(await readdir(join(root, 'tmp'))).toEqual([]);
    const next = await store.putResult('job-g', 'summary.json', [Buffer.from('{}')], 100);
    expect(next.status).toBe('created');
  });
});
