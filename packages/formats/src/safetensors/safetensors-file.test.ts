import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isFlowfleetError } from '@flowfleet/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawSafetensors } from '../../test-support/raw-safetensors.js';
import { readSafetensors } from './read-safetensors.js';
import { readSafetensorsHeader, SafetensorsFileReader } from './safetensors-file.js';
import { writeSafetensors } from './write-safetensors.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'formats-safetensors-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('SafetensorsFileReader', () => {
  it('reads the header and single tensors of a file, as readSafetensors decodes the buffer', async () => {
    const bytes = writeSafetensors(
      {
        w: { dtype: 'F32', shape: [2, 2], data: Float32Array.of(1, 2, 3, 4) },
        n: { dtype: 'I64', shape: [1], data: BigInt64Array.of(9n) },
      },
      { kind: 'test' },
    );
    const path = join(dir, 'small.safetensors');
    await writeFile(path, bytes);
    const reader = await SafetensorsFileReader.open(path);
    expect(reader.header.metadata).toEqual({ kind: 'test' });
    expect(reader.header.fileBytes).toBe(bytes.length);
    expect([...reader.header.tensors.keys()]).toEqual(['n', 'w']);
    const decoded = readSafetensors(bytes).tensors;
    expect(await reader.readTensor('w')).toEqual(decoded.get('w'));
    expect(await reader.readTensor('n')).toEqual(decoded.get('n'));
    const unknown = await caught(reader.readTensor('missing'));
    expect(isFlowfleetError(unknown, 'FMT_SAFETENSORS_INVALID')).toBe(true);
    await reader.close();
    await reader.close();
    expect(isFlowfleetError(await caught(reader.readTensor('w')), 'FMT_FILE_IO')).toBe(true);
  });

  it('opens a 3 GiB checkpoint reading only its header, and reads the tensor after the big one', async () => {
    const big = 3 * 2 ** 30;
    const header = {
      big: { dtype: 'U8', shape: [big], data_offsets: [0, big] },
      tail: { dtype: 'I32', shape: [2], data_offsets: [big, big + 8] },
    };
    const prefix = rawSafetensors(`${JSON.stringify(header)}`);
    const path = join(dir, 'sparse.safetensors');
    const handle = await open(path, 'w+');
    await handle.write(prefix, 0, prefix.length, 0);
    // A sparse file: the 3 GiB of zeros take no disk and are never read.
    await handle.write(new Uint8Array(new Int32Array([7, -7]).buffer), 0, 8, prefix.length + big);
    await handle.close();
    const started = performance.now();
    const reader = await SafetensorsFileReader.open(path);
    expect(reader.header.tensors.get('big')?.shape).toEqual([big]);
    expect(Array.from((await reader.readTensor('tail')).data as Int32Array)).toEqual([7, -7]);
    await reader.close();
    expect(performance.now() - started).toBeLessThan(2_000);
    expect((await readSafetensorsHeader(path)).fileBytes).toBe(prefix.length + big + 8);
  });

  it('leaves a caller-owned FileHandle open', async () => {
    const path = join(dir, 'handle.safetensors');
    await writeFile(path, writeSafetensors({}));
    const handle = await open(path, 'r');
    const reader = await SafetensorsFileReader.open(handle);
    await reader.close();
    expect((await handle.stat()).size).toBe(8 + 8);
    await handle.close();
  });

  it('refuses a malformed header with the reason a buffer gets, and a missing file as FMT_FILE_IO', async () => {
    const path = join(dir, 'gap.safetensors');
    await writeFile(
      path,
      rawSafetensors({ a: { dtype: 'U8', shape: [1], data_offsets: [1, 2] } }, new Uint8Array(2)),
    );
    const error = await caught(SafetensorsFileReader.open(path));
    expect(isFlowfleetError(error, 'FMT_SAFETENSORS_INVALID')).toBe(true);
    expect((error as { details: { reason: string } }).details.reason).toBe('gap');
    const short = join(dir, 'short.safetensors');
    await writeFile(short, new Uint8Array(3));
    const tooShort = await caught(SafetensorsFileReader.open(short));
    expect((tooShort as { details: { reason: string } }).details.reason).toBe('too-short');
    const missing = await caught(SafetensorsFileReader.open(join(dir, 'none.safetensors')));
    expect(isFlowfleetError(missing, 'FMT_FILE_IO')).toBe(true);
  });
});
