import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isFlowfleetError } from '@flowfleet/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SafetensorsTensor } from './dtypes.js';
import { openSafetensorsCheckpoint } from './safetensors-checkpoint.js';
import { SafetensorsFileWriter } from './safetensors-file-writer.js';
import { planSafetensorsShards } from './safetensors-shards.js';
import { writeSafetensors } from './write-safetensors.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'formats-writer-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const tensors: Record<string, SafetensorsTensor> = {
  'b.weight': { dtype: 'F32', shape: [2, 3], data: Float32Array.from([1, 2, 3, 4, 5, 6]) },
  'a.bias': { dtype: 'BF16', shape: [3], data: Uint16Array.from([0x3f80, 0x4000, 0xbf80]) },
  'c.ids': { dtype: 'I64', shape: [2], data: BigInt64Array.from([7n, -1n]) },
  scalar: { dtype: 'F16', shape: [], data: Uint16Array.from([0x3c00]) },
};
const specs = Object.entries(tensors).map(([name, t]) => ({
  name,
  dtype: t.dtype,
  shape: t.shape,
}));

async function reason(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    if (isFlowfleetError(error, 'FMT_SAFETENSORS_INVALID')) return error.details['reason'];
    throw error;
  }
  throw new Error('expected FMT_SAFETENSORS_INVALID');
}

describe('SafetensorsFileWriter', () => {
  it('writes, tensor by tensor in any order, the bytes writeSafetensors writes', async () => {
    const path = join(root, 'streamed.safetensors');
    const writer = await SafetensorsFileWriter.create(path, specs, { format: 'pt' });
    for (const name of ['scalar', 'b.weight', 'c.ids', 'a.bias']) {
      await writer.write(name, tensors[name]!);
    }
    expect(writer.pending).toEqual([]);
    await writer.close();
    await writer.close();
    const expected = writeSafetensors(tensors, { format: 'pt' });
    expect(new Uint8Array(await readFile(path))).toEqual(expected);
  });

  it('refuses an undeclared tensor, a second write and a dtype or shape other than declared', async () => {
    const writer = await SafetensorsFileWriter.create(join(root, 'refusals.safetensors'), specs);
    expect(await reason(writer.write('missing', tensors['a.bias']!))).toBe('unknown-tensor');
    expect(await reason(writer.write('a.bias', tensors['b.weight']!))).toBe('size-mismatch');
    const wrongShape = { ...tensors['b.weight']!, shape: [3, 2] } as SafetensorsTensor;
    expect(await reason(writer.write('b.weight', wrongShape))).toBe('size-mismatch');
    await writer.write('a.bias', tensors['a.bias']!);
    expect(await reason(writer.write('a.bias', tensors['a.bias']!))).toBe('duplicate-key');
    await writer.abort();
  });

  it('refuses to close a file with a tensor never written, and deletes it', async () => {
    const path = join(root, 'partial.safetensors');
    const writer = await SafetensorsFileWriter.create(path, specs);
    await writer.write('a.bias', tensors['a.bias']!);
    expect(await reason(writer.close())).toBe('truncated');
    await expect(access(path)).rejects.toThrow();
  });

  it('refuses a name declared twice before writing anything', async () => {
    const twice = [specs[0]!, { ...specs[0]! }];
    expect(await reason(SafetensorsFileWriter.create(join(root, 'twice.safetensors'), twice))).toBe(
      'duplicate-key',
    );
  });
});

describe('planSafetensorsShards', () => {
  const entry = (name: string, count: number) => ({
    name,
    dtype: 'F32' as const,
    shape: [count],
  });

  it('starts a shard when the next tensor would pass the limit, a large tensor alone', () => {
    const plan = planSafetensorsShards(
      [entry('a', 10), entry('b', 10), entry('c', 30), entry('d', 1)],
      80,
      'diffusion_pytorch_model',
    );
    expect(plan.shards.map((s) => [s.file, s.entries.map((e) => e.name)])).toEqual([
      ['diffusion_pytorch_model-00001-of-00003.safetensors', ['a', 'b']],
      ['diffusion_pytorch_model-00002-of-00003.safetensors', ['c']],
      ['diffusion_pytorch_model-00003-of-00003.safetensors', ['d']],
    ]);
    expect(plan.indexFile).toBe('diffusion_pytorch_model.safetensors.index.json');
    const index = JSON.parse(plan.indexJson) as {
      metadata: { total_size: number };
      weight_map: Record<string, string>;
    };
    expect(index.metadata.total_size).toBe(4 * 51);
    expect(index.weight_map['c']).toBe('diffusion_pytorch_model-00002-of-00003.safetensors');
  });

  it('writes shards a checkpoint reader opens through their index', async () => {
    const dir = await mkdtemp(join(root, 'sharded-'));
    const plan = planSafetensorsShards(specs, 16, 'model');
    expect(plan.shards.length).toBeGreaterThan(1);
    for (const shard of plan.shards) {
      const writer = await SafetensorsFileWriter.create(join(dir, shard.file), shard.entries);
      for (const { name } of shard.entries) await writer.write(name, tensors[name]!);
      await writer.close();
    }
    await writeFile(join(dir, plan.indexFile), plan.indexJson);
    const checkpoint = await openSafetensorsCheckpoint(dir);
    expect(checkpoint.shards.length).toBe(plan.shards.length);
    const names = checkpoint.shards.flatMap((s) => [...s.header.tensors.keys()]).sort();
    expect(names).toEqual(Object.keys(tensors).sort());
  });
});
