import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFlowfleetError } from '@flowfleet/errors';
import type { TensorData } from '@flowfleet/platform';
import { readSafetensors, type SafetensorsTensor } from './read-safetensors.js';
import { loadWeightsFile, saveWeightsFile } from './weights-file.js';
import { writeSafetensors } from './write-safetensors.js';

const tensors = new Map<string, TensorData>([
  [
    'z.weight',
    {
      dtype: 'float32',
      dims: [2, 3],
      data: new Float32Array([1, -0, NaN, Infinity, 1e-45, 3.4028234663852886e38]),
    },
  ],
  ['a.bias', { dtype: 'float32', dims: [1], data: new Float32Array([0.1]) }],
  ['tokens', { dtype: 'int32', dims: [1, 2], data: new Int32Array([256, -7]) }],
  ['ids', { dtype: 'int64', dims: [2], data: new BigInt64Array([1n, -(2n ** 62n)]) }],
  ['scalar', { dtype: 'float32', dims: [], data: new Float32Array([7]) }],
]);

function sameBits(a: SafetensorsTensor['data'], b: SafetensorsTensor['data']): boolean {
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

describe('writeSafetensors', () => {
  it('round-trips F32 bit-exactly (incl. -0, NaN, inf, subnormals), I32, I64 and metadata', () => {
    const bytes = writeSafetensors(tensors, { step: '3', format: 'pt' });
    const headerBytes = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect(headerBytes % 8).toBe(0);
    const file = readSafetensors(bytes);
    expect(file.metadata).toEqual({ step: '3', format: 'pt' });
    expect([...file.tensors.keys()].sort()).toEqual([...tensors.keys()].sort());
    for (const [name, t] of tensors) {
      const back = file.tensors.get(name)!;
      expect(back.dtype, name).toBe(t.dtype);
      expect(back.dims, name).toEqual(t.dims);
      expect(sameBits(back.data, t.data), name).toBe(true);
    }
    expect(file.storedDtypes.get('tokens')).toBe('I32');
    expect(file.storedDtypes.get('ids')).toBe('I64');
  });

  it('writes F64 from Float64Array; it reads back as float64 only when asked', () => {
    const values = [0.1, -0, NaN, Infinity, 5e-324, Number.MAX_VALUE, 1 / 3];
    const f64: SafetensorsTensor = { dtype: 'float64', dims: [7], data: Float64Array.from(values) };
    const bytes = writeSafetensors({ ...Object.fromEntries(tensors), f64 });
    const kept = readSafetensors(bytes, { keepFloat64: true });
    expect(kept.storedDtypes.get('f64')).toBe('F64');
    const back = kept.tensors.get('f64')!;
    expect(back.dtype).toBe('float64');
    expect(back.data).toBeInstanceOf(Float64Array);
    expect(back.dims).toEqual([7]);
    expect(sameBits(back.data, f64.data)).toBe(true);
    // Other dtypes are unaffected by the option.
    expect(sameBits(kept.tensors.get('z.weight')!.data, tensors.get('z.weight')!.data)).toBe(true);
    // The default (the weights path) still rounds F64 to float32.
    const rounded = readSafetensors(bytes).tensors.get('f64')!;
    expect(rounded.dtype).toBe('float32');
    expect([...rounded.data]).toEqual(values.map((v) => Math.fround(v)));
  });

  it('is deterministic and name-sorted regardless of insertion order', () => {
    const reversed = new Map([...tensors.entries()].reverse());
    expect(writeSafetensors(reversed)).toEqual(writeSafetensors(tensors));
    const record = Object.fromEntries(tensors);
    expect(writeSafetensors(record)).toEqual(writeSafetensors(tensors));
  });

  it('writes views of larger buffers correctly', () => {
    const big = new Float32Array([9, 8, 7, 6]);
    const view = big.subarray(1, 3);
    const file = readSafetensors(
      writeSafetensors({ v: { dtype: 'float32', dims: [2], data: view } }),
    );
    expect([...file.tensors.get('v')!.data]).toEqual([8, 7]);
  });

  it('rejects dims that do not match the data', () => {
    try {
      writeSafetensors({ v: { dtype: 'float32', dims: [3], data: new Float32Array(2) } });
      expect.unreachable();
    } catch (error) {
      expect(isFlowfleetError(error, 'MODEL_SAFETENSORS_INVALID')).toBe(true);
    }
  });
});

describe('weights files', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'flowfleet-models-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('saves atomically and loads back', async () => {
    const path = join(dir, 'w.safetensors');
    await saveWeightsFile(path, tensors, { version: '1' });
    expect(await readdir(dir)).toEqual(['w.safetensors']);
    const file = await loadWeightsFile(path);
    expect(file.metadata).toEqual({ version: '1' });
    expect(file.tensors.get('a.bias')!.data).toEqual(new Float32Array([0.1]));
  });

  it('maps I/O failures to MODEL_WEIGHTS_IO and bad files to MODEL_SAFETENSORS_INVALID', async () => {
    await expect(loadWeightsFile(join(dir, 'missing.safetensors'))).rejects.toMatchObject({
      code: 'MODEL_WEIGHTS_IO',
    });
    await expect(
      saveWeightsFile(join(dir, 'no', 'such', 'dir.safetensors'), tensors),
    ).rejects.toMatchObject({
      code: 'MODEL_WEIGHTS_IO',
    });
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    const bad = join(dir, 'bad.safetensors');
    await writeFile(bad, new Uint8Array([1, 2, 3]));
    await expect(loadWeightsFile(bad)).rejects.toMatchObject({ code: 'MODEL_SAFETENSORS_INVALID' });
  });
});
