import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BlobWriter } from './blob-writer.js';

let root: string;
let writer: BlobWriter;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'flowfleet-writer-'));
  writer = new BlobWriter();
});
afterEach(async () => {
  await writer.close();
  await rm(root, { recursive: true, force: true });
});

const request = (name: string, text: string, temp = `${name}.part`) => ({
  dir: join(root, 'd'),
  temp: join(root, temp),
  target: join(root, 'd', name),
  bytes: Buffer.from(text),
});

describe('BlobWriter', () => {
  it('creates a file once, reports what a second write found, and leaves no temp file', async () => {
    const first = await writer.write(request('a', 'one'));
    expect(first.status).toBe('created');
    const again = await writer.write(request('a', 'two', 'a2.part'));
    expect(again).toMatchObject({ status: 'exists', storedSha256: first.sha256 });
    expect(again.sha256).not.toBe(first.sha256);
    expect(await readFile(join(root, 'd', 'a'), 'utf8')).toBe('one');
    expect((await readdir(root)).sort()).toEqual(['d']);
  });

  it('writes many files at once across its threads', async () => {
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => writer.write(request(`f${i}`, `bytes ${i}`))),
    );
    expect(results.every((r) => r.status === 'created')).toBe(true);
    expect((await readdir(join(root, 'd'))).length).toBe(40);
  });

  it('refuses writes after close (close is idempotent)', async () => {
    await writer.write(request('b', 'x'));
    await writer.close();
    await writer.close();
    await expect(writer.write(request('c', 'y'))).rejects.toThrow('closed');
  });
});
