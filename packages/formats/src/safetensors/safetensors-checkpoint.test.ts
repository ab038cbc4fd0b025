import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isFlowfleetError } from '@flowfleet/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSafetensorsCheckpoint, parseSafetensorsIndex } from './safetensors-checkpoint.js';
import { writeSafetensors } from './write-safetensors.js';

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'formats-checkpoint-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const f32 = (...values: number[]) => ({
  dtype: 'F32' as const,
  shape: [values.length],
  data: Float32Array.from(values),
});

async function dir(name: string, files: Record<string, Uint8Array | string>): Promise<string> {
  const path = join(root, name);
  await mkdir(path);
  for (const [file, content] of Object.entries(files)) await writeFile(join(path, file), content);
  return path;
}

async function refusal(path: string): Promise<Record<string, unknown>> {
  try {
    await openSafetensorsCheckpoint(path);
  } catch (error) {
    if (isFlowfleetError(error, 'FMT_CHECKPOINT_INVALID')) return { ...error.details };
    throw error;
  }
  throw new Error('expected FMT_CHECKPOINT_INVALID');
}

const SHARD_1 = writeSafetensors({ a: f32(1), b: f32(2) });
const SHARD_2 = writeSafetensors({ c: f32(3) });
const INDEX = JSON.stringify({
  metadata: { total_size: 12 },
  weight_map: { a: 'm-1.safetensors', b: 'm-1.safetensors', c: 'm-2.safetensors' },
});

describe('openSafetensorsCheckpoint', () => {
  it('opens a sharded directory through its index, shards in name order', async () => {
    const path = await dir('sharded', {
      'm-2.safetensors': SHARD_2,
      'm-1.safetensors': SHARD_1,
      'model.safetensors.index.json': INDEX,
      'README.md': 'not a shard',
    });
    const checkpoint = await openSafetensorsCheckpoint(path);
    expect(checkpoint.indexPath).toBe(join(path, 'model.safetensors.index.json'));
    expect(checkpoint.shards.map((s) => s.path)).toEqual([
      join(path, 'm-1.safetensors'),
      join(path, 'm-2.safetensors'),
    ]);
    expect([...checkpoint.shards[0]!.header.tensors.keys()]).toEqual(['a', 'b']);
    // The index file itself works as the path too.
    const viaIndex = await openSafetensorsCheckpoint(join(path, 'model.safetensors.index.json'));
    expect(viaIndex.shards).toHaveLength(2);
  });

  it('opens a single file, or a directory holding exactly one', async () => {
    const path = await dir('single', { 'adapter_model.safetensors': SHARD_2, 'x.json': '{}' });
    expect((await openSafetensorsCheckpoint(path)).shards.map((s) => s.path)).toEqual([
      join(path, 'adapter_model.safetensors'),
    ]);
    const file = join(path, 'adapter_model.safetensors');
    const single = await openSafetensorsCheckpoint(file);
    expect(single.indexPath).toBeUndefined();
    expect([...single.shards[0]!.header.tensors.keys()]).toEqual(['c']);
  });

  it('lists every disagreement between the index and the shards in one error', async () => {
    const path = await dir('mismatch', {
      'm-1.safetensors': SHARD_1,
      'm-2.safetensors': writeSafetensors({ c: f32(3), b: f32(9) }),
      'model.safetensors.index.json': JSON.stringify({
        weight_map: {
          a: 'm-2.safetensors',
          b: 'm-1.safetensors',
          c: 'm-2.safetensors',
          d: 'm-1.safetensors',
        },
      }),
    });
    const details = await refusal(path);
    expect(details['reason']).toBe('index-mismatch');
    expect(details['problems']).toEqual([
      'a is in m-1.safetensors, the weight_map says m-2.safetensors',
      'b is in both m-1.safetensors and m-2.safetensors',
      'b is in m-2.safetensors, the weight_map says m-1.safetensors',
      'd is not in m-1.safetensors',
    ]);
  });

  it('refuses a directory with no shard, several without an index, or two indexes', async () => {
    expect((await refusal(await dir('empty', { 'a.txt': 'x' })))['reason']).toBe('no-safetensors');
    expect(
      (await refusal(await dir('two', { 'a.safetensors': SHARD_1, 'b.safetensors': SHARD_2 })))[
        'reason'
      ],
    ).toBe('several-files');
    expect(
      (
        await refusal(
          await dir('two-indexes', {
            'a.safetensors.index.json': INDEX,
            'b.safetensors.index.json': INDEX,
          }),
        )
      )['reason'],
    ).toBe('several-indexes');
  });

  it('parses an index strictly: a weight_map of bare file names', () => {
    expect(parseSafetensorsIndex(INDEX).weightMap.get('c')).toBe('m-2.safetensors');
    for (const text of [
      '[]',
      '{}',
      '{"weight_map": {}}',
      '{"weight_map": {"a": "../x.safetensors"}}',
    ]) {
      let reason: unknown;
      try {
        parseSafetensorsIndex(text);
      } catch (error) {
        if (isFlowfleetError(error, 'FMT_CHECKPOINT_INVALID')) reason = error.details['reason'];
      }
      expect(reason, text).toBe('index-invalid');
    }
  });
});
