// A blob store on a real, full filesystem (a 2 MiB tmpfs): every write is refused with
// API_BLOB_STORE_FULL, nothing partial stays behind (no temp file, no blob, no result name), and
// the same writes succeed once space is back.
import { createHash, randomBytes } from 'node:crypto';
import { readdir, rm, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { FsBlobStore } from '@flowfleet/coordinator';
import { isFlowfleetError } from '@flowfleet/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fillDisk, mountTmpfs, type Tmpfs } from '../harness/tmpfs.js';

const SIZE_BYTES = 2 * 1024 * 1024;

let fs: Tmpfs;
let store: FsBlobStore;
let root: string;

beforeAll(async () => {
  fs = await mountTmpfs(SIZE_BYTES);
  root = join(fs.dir, 'store');
  store = new FsBlobStore(root);
  await store.init();
});

afterAll(async () => {
  await store?.close();
  await fs?.unmount();
});

async function* chunks(bytes: Uint8Array, size = 64 * 1024): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.byteLength; at += size) yield bytes.subarray(at, at + size);
}

async function storeFiles(): Promise<string[]> {
  const names: string[] = [];
  for (const dir of ['tmp', 'sha256', 'digests', 'results']) {
    for (const entry of await readdir(join(root, dir), { recursive: true })) {
      names.push(`${dir}/${entry}`);
    }
  }
  return names.sort();
}

async function freeBytes(): Promise<number> {
  const stats = await statfs(fs.dir);
  return stats.bavail * stats.bsize;
}

async function refusal(write: Promise<unknown>): Promise<unknown> {
  try {
    await write;
  } catch (error) {
    return error;
  }
  throw new Error('the write was accepted');
}

describe('a full blob store', () => {
  it('refuses a blob larger than the free space with API_BLOB_STORE_FULL and keeps nothing', async () => {
    const before = await freeBytes();
    const bytes = randomBytes(SIZE_BYTES + 256 * 1024);
    const error = await refusal(store.putBlob(chunks(bytes), 64 * 1024 * 1024));
    expect(isFlowfleetError(error, 'API_BLOB_STORE_FULL')).toBe(true);
    expect((error as { details: unknown }).details).toMatchObject({ errno: 'ENOSPC' });
    expect(await storeFiles()).toEqual([]);
    expect(await freeBytes()).toBe(before);
  });

  it('refuses results while the disk is full and stores them whole once space is back', async () => {
    const filler = join(fs.dir, 'filler');
    await fillDisk(filler);
    const result = randomBytes(48 * 1024);
    const summary = Buffer.from('{"id":"job-1"}');
    const refused = await refusal(
      store.putResult('job-1', 'result.safetensors', chunks(result), 1 << 20),
    );
    expect(isFlowfleetError(refused, 'API_BLOB_STORE_FULL')).toBe(true);
    const blob = await refusal(store.putBlob([randomBytes(8 * 1024)], 1 << 20));
    expect(isFlowfleetError(blob, 'API_BLOB_STORE_FULL')).toBe(true);
    // The job's directory may exist (mkdir needs no data block); no file name does.
    expect((await storeFiles()).filter((name) => !/^results\/job-1$/.test(name))).toEqual([]);
    expect(await store.openResult('job-1', 'result.safetensors')).toBeUndefined();

    await rm(filler);
    const written = await store.putResult('job-1', 'result.safetensors', chunks(result), 1 << 20);
    expect(written).toMatchObject({
      status: 'created',
      sizeBytes: result.byteLength,
      sha256: createHash('sha256').update(result).digest('hex'),
    });
    await store.putResult('job-1', 'summary.json', [summary], 1 << 20);
    expect(await storeFiles()).toEqual([
      'results/job-1',
      'results/job-1/result.safetensors',
      'results/job-1/summary.json',
    ]);
  });
});
