import { createHash } from 'node:crypto';
import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { digestSafetensors, SafetensorsDigester } from './safetensors-digest.js';
import { parseSafetensorsHeader, readHeaderLength } from './safetensors-header.js';
import { writeSafetensors } from './write-safetensors.js';

const FILE = writeSafetensors({
  a: { dtype: 'F32', shape: [3], data: Float32Array.of(1, 2, 3) },
  b: { dtype: 'BF16', shape: [2, 2], data: Uint16Array.of(1, 2, 3, 4) },
  empty: { dtype: 'F32', shape: [0], data: new Float32Array(0) },
  z: { dtype: 'I64', shape: [1], data: BigInt64Array.of(5n) },
});

function chunks(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

/** Each tensor's sha256, computed from the whole file. */
function expectedDigests(bytes: Uint8Array): Map<string, string> {
  const n = readHeaderLength(bytes.subarray(0, 8), bytes.length);
  const header = parseSafetensorsHeader(bytes.subarray(8, 8 + n), bytes.length);
  const out = new Map<string, string>();
  for (const [name, entry] of header.tensors) {
    const [begin, end] = entry.dataOffsets;
    const data = bytes.subarray(header.dataStart + begin, header.dataStart + end);
    out.set(name, createHash('sha256').update(data).digest('hex'));
  }
  return out;
}

function reasonOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    if (isFlowfleetError(error, 'FMT_SAFETENSORS_INVALID')) return String(error.details['reason']);
    throw error;
  }
  return undefined;
}

describe('SafetensorsDigester', () => {
  it('hashes every tensor (an empty one too) whatever the chunking', async () => {
    const expected = expectedDigests(FILE);
    for (const size of [1, 3, 8, 13, FILE.length]) {
      const digest = await digestSafetensors(chunks(FILE, size));
      expect(digest.tensorSha256).toEqual(expected);
      expect(digest.header.tensors.get('b')?.dtype).toBe('BF16');
      expect(digest.header.fileBytes).toBe(FILE.length);
    }
    expect(expected.get('empty')).toBe(createHash('sha256').digest('hex'));
  });

  it('refuses a truncated file and trailing bytes at finish, as the whole-file parser does', () => {
    const feed = (bytes: Uint8Array) => () => {
      const digester = new SafetensorsDigester();
      for (const chunk of chunks(bytes, 5)) digester.update(chunk);
      return digester.finish();
    };
    expect(reasonOf(feed(FILE.subarray(0, FILE.length - 1)))).toBe('truncated');
    expect(reasonOf(feed(Uint8Array.from([...FILE, 0])))).toBe('trailing-bytes');
    expect(reasonOf(feed(FILE.subarray(0, 5)))).toBe('too-short');
    expect(reasonOf(feed(FILE.subarray(0, 20)))).toBe('header-out-of-bounds');
  });

  it('refuses a malformed header as soon as it is complete, and stays refused', () => {
    const bad = Uint8Array.from(FILE);
    bad[8] = 0x5b; // '[' : not a JSON object
    const digester = new SafetensorsDigester();
    const n = readHeaderLength(FILE.subarray(0, 8), FILE.length);
    digester.update(bad.subarray(0, 8 + n - 1));
    expect(reasonOf(() => digester.update(bad.subarray(8 + n - 1, 8 + n)))).toMatch(/header-not/);
    expect(reasonOf(() => digester.update(bad.subarray(8 + n)))).toMatch(/header-not/);
    expect(reasonOf(() => digester.finish())).toMatch(/header-not/);
  });
});
