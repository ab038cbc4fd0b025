import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSafetensors, writeSafetensors } from '@flowfleet/formats';
import type { TensorData } from '@flowfleet/platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeWeights, encodeWeights, loadWeightsFile, saveWeightsFile } from './weights-file.js';

const tensors = new Map<string, TensorData>([
  ['a.weight', { dtype: 'float32', dims: [2, 2], data: Float32Array.of(1, -0, NaN, 2 ** -149) }],
  ['a.bias', { dtype: 'float32', dims: [1], data: Float32Array.of(0.1) }],
  ['steps', { dtype: 'int64', dims: [1], data: BigInt64Array.of(5n) }],
]);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'models-weights-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('weights files', () => {
  it('encode and decode TensorData bit for bit, F32 as views of the blob', () => {
    const bytes = encodeWeights(tensors, { version: '1' });
    const { tensors: back, metadata } = decodeWeights(bytes);
    expect(metadata).toEqual({ version: '1' });
    expect(back).toEqual(tensors);
    expect(back.get('a.weight')!.data.buffer).toBe(bytes.buffer);
    expect(readSafetensors(bytes).tensors.get('a.weight')?.dtype).toBe('F32');
  });

  it('decode F16, BF16 and F64 checkpoints to float32', () => {
    const bytes = writeSafetensors({
      h: { dtype: 'F16', shape: [2], data: Uint16Array.of(0x3c00, 0xc000) },
      b: { dtype: 'BF16', shape: [1], data: Uint16Array.of(0x3fc0) },
      d: { dtype: 'F64', shape: [1], data: Float64Array.of(0.1) },
    });
    const { tensors: back } = decodeWeights(bytes);
    expect(back.get('h')).toEqual({ dtype: 'float32', dims: [2], data: Float32Array.of(1, -2) });
    expect(back.get('b')?.data).toEqual(Float32Array.of(1.5));
    expect(back.get('d')?.data).toEqual(Float32Array.of(0.1));
  });

  it('save atomically and load back; I/O failures are MODEL_WEIGHTS_IO, bad files FMT_SAFETENSORS_INVALID', async () => {
    const path = join(dir, 'w.safetensors');
    await saveWeightsFile(path, tensors, { version: '1' });
    expect(await readdir(dir)).toEqual(['w.safetensors']);
    expect((await loadWeightsFile(path)).tensors).toEqual(tensors);
    await expect(loadWeightsFile(join(dir, 'missing.safetensors'))).rejects.toMatchObject({
      code: 'MODEL_WEIGHTS_IO',
    });
    await expect(
      saveWeightsFile(join(dir, 'no', 'dir.safetensors'), tensors),
    ).rejects.toMatchObject({
      code: 'MODEL_WEIGHTS_IO',
    });
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    const bad = join(dir, 'bad.safetensors');
    await writeFile(bad, new Uint8Array([1, 2, 3]));
    await expect(loadWeightsFile(bad)).rejects.toMatchObject({ code: 'FMT_SAFETENSORS_INVALID' });
  });
});
