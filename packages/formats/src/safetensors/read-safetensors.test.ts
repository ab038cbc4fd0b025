import { isFlowfleetError } from '@flowfleet/errors';
import type { SafetensorsTensor } from './dtypes.js';
import { describe, expect, it } from 'vitest';
import { rawSafetensors } from '../../test-support/raw-safetensors.js';
import { readSafetensors } from './read-safetensors.js';
import type { SafetensorsInvalidReason } from './safetensors-error.js';
import { writeSafetensors } from './write-safetensors.js';

function reasonOf(bytes: Uint8Array): SafetensorsInvalidReason | 'accepted' {
  try {
    readSafetensors(bytes);
    return 'accepted';
  } catch (error) {
    if (!isFlowfleetError(error, 'FMT_SAFETENSORS_INVALID')) throw error;
    return error.details['reason'] as SafetensorsInvalidReason;
  }
}

const F32_2 = { dtype: 'F32', shape: [2], data_offsets: [0, 8] };
const EIGHT = new Uint8Array(8);

describe('readSafetensors', () => {
  it('decodes every dtype the writer writes', () => {
    const bytes = writeSafetensors({
      f64: { dtype: 'F64', shape: [2], data: Float64Array.of(0.1, -1e300) },
      f32: { dtype: 'F32', shape: [1, 2], data: Float32Array.of(1.5, -0) },
      f16: { dtype: 'F16', shape: [1], data: Uint16Array.of(0x3c00) },
      bf16: { dtype: 'BF16', shape: [1], data: Uint16Array.of(0x3f80) },
      i64: { dtype: 'I64', shape: [1], data: BigInt64Array.of(-(2n ** 63n)) },
      i32: { dtype: 'I32', shape: [1], data: Int32Array.of(-7) },
      i16: { dtype: 'I16', shape: [1], data: Int16Array.of(-300) },
      i8: { dtype: 'I8', shape: [1], data: Int8Array.of(-5) },
      u8: { dtype: 'U8', shape: [2], data: Uint8Array.of(0, 255) },
      flag: { dtype: 'BOOL', shape: [3], data: Uint8Array.of(1, 0, 1) },
    });
    const { tensors, metadata } = readSafetensors(bytes);
    expect(metadata).toEqual({});
    expect([...tensors.keys()]).toEqual([
      'bf16',
      'f16',
      'f32',
      'f64',
      'flag',
      'i16',
      'i32',
      'i64',
      'i8',
      'u8',
    ]);
    expect(tensors.get('f64')).toEqual({
      dtype: 'F64',
      shape: [2],
      data: Float64Array.of(0.1, -1e300),
    });
    expect(Object.is(tensors.get('f32')?.data[1], -0)).toBe(true);
    expect(tensors.get('i64')?.data[0]).toBe(-(2n ** 63n));
    expect(tensors.get('flag')).toEqual({
      dtype: 'BOOL',
      shape: [3],
      data: Uint8Array.of(1, 0, 1),
    });
    expect(tensors.get('bf16')?.data).toBeInstanceOf(Uint16Array);
  });

  it('returns views of an aligned buffer, and copies with `copy` or when misaligned', () => {
    const bytes = writeSafetensors(
      { a: { dtype: 'F32', shape: [3], data: Float32Array.of(1, 2, 3) } },
      { note: 'x' },
    );
    const viewed = readSafetensors(bytes).tensors.get('a')!;
    expect(viewed.data.buffer).toBe(bytes.buffer);
    const copied = readSafetensors(bytes, { copy: true }).tensors.get('a')!;
    expect(copied.data.buffer).not.toBe(bytes.buffer);
    const shifted = new Uint8Array(bytes.length + 1).subarray(1);
    shifted.set(bytes);
    const realigned = readSafetensors(shifted).tensors.get('a')!;
    expect(realigned.data.buffer).not.toBe(shifted.buffer);
    expect(Array.from(realigned.data as Float32Array)).toEqual([1, 2, 3]);
  });

  it('accepts an empty file header, zero-size and scalar tensors, and space padding', () => {
    expect(reasonOf(rawSafetensors('{}'))).toBe('accepted');
    const header = {
      empty: { dtype: 'F32', shape: [0, 3], data_offsets: [0, 0] },
      scalar: { dtype: 'I64', shape: [], data_offsets: [0, 8] },
    };
    const { tensors } = readSafetensors(rawSafetensors(`${JSON.stringify(header)}   `, EIGHT));
    expect(tensors.get('empty')?.data).toHaveLength(0);
    expect(tensors.get('scalar')?.shape).toEqual([]);
  });

  it.each<[string, Uint8Array, SafetensorsInvalidReason]>([
    ['5 bytes', new Uint8Array(5), 'too-short'],
    [
      'a header length over 100 MB',
      rawSafetensors('{}', EIGHT, { headerLength: 100_000_001n }),
      'header-too-large',
    ],
    [
      'a header length past the end',
      rawSafetensors('{}', EIGHT, { headerLength: 11n }),
      'header-out-of-bounds',
    ],
    [
      'a header that is not UTF-8',
      rawSafetensors('', EIGHT, { headerBytes: Uint8Array.of(0x7b, 0xff, 0x7d) }),
      'header-not-utf8',
    ],
    ['a header that is not JSON', rawSafetensors('{"a":', EIGHT), 'header-not-json'],
    ['a JSON array header', rawSafetensors('[]'), 'header-not-object'],
    ['a header with leading whitespace', rawSafetensors(' {}'), 'header-not-object'],
    [
      'a tensor named twice',
      rawSafetensors(`{"a":${JSON.stringify(F32_2)},"a":${JSON.stringify(F32_2)}}`, EIGHT),
      'duplicate-key',
    ],
    [
      'an escaped duplicate',
      rawSafetensors(`{"a":${JSON.stringify(F32_2)},"\\u0061":${JSON.stringify(F32_2)}}`, EIGHT),
      'duplicate-key',
    ],
    [
      'a duplicate metadata key',
      rawSafetensors('{"__metadata__":{"k":"1","k":"2"}}'),
      'duplicate-key',
    ],
    [
      'a duplicate entry field',
      rawSafetensors('{"a":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}}', EIGHT),
      'duplicate-key',
    ],
    ['the empty name', rawSafetensors({ '': F32_2 }, EIGHT), 'empty-name'],
    [
      'a number in __metadata__',
      rawSafetensors({ __metadata__: { n: 1 } }),
      'metadata-not-strings',
    ],
    ['__metadata__ as a string', rawSafetensors({ __metadata__: 'x' }), 'metadata-not-strings'],
    [
      'an entry with an extra field',
      rawSafetensors({ a: { ...F32_2, extra: 1 } }, EIGHT),
      'entry-invalid',
    ],
    [
      'an entry without shape',
      rawSafetensors({ a: { dtype: 'F32', data_offsets: [0, 8] } }, EIGHT),
      'entry-invalid',
    ],
    [
      'an unsupported dtype',
      rawSafetensors({ a: { ...F32_2, dtype: 'U32' } }, EIGHT),
      'unsupported-dtype',
    ],
    [
      'an FP8 dtype',
      rawSafetensors({ a: { ...F32_2, dtype: 'F8_E4M3', shape: [8] } }, EIGHT),
      'unsupported-dtype',
    ],
    ['a negative dim', rawSafetensors({ a: { ...F32_2, shape: [-2] } }, EIGHT), 'invalid-shape'],
    ['a fractional dim', rawSafetensors({ a: { ...F32_2, shape: [1.5] } }, EIGHT), 'invalid-shape'],
    [
      'three offsets',
      rawSafetensors({ a: { ...F32_2, data_offsets: [0, 4, 8] } }, EIGHT),
      'invalid-offsets',
    ],
    [
      'an end before its begin',
      rawSafetensors({ a: { ...F32_2, data_offsets: [8, 0] } }, EIGHT),
      'invalid-offsets',
    ],
    [
      'a span that is not dtype × shape',
      rawSafetensors({ a: { ...F32_2, shape: [3] } }, EIGHT),
      'size-mismatch',
    ],
    [
      'a gap before the first tensor',
      rawSafetensors({ a: { ...F32_2, data_offsets: [4, 12] } }, new Uint8Array(12)),
      'gap',
    ],
    [
      'a gap between tensors',
      rawSafetensors({ a: F32_2, b: { ...F32_2, data_offsets: [12, 20] } }, new Uint8Array(20)),
      'gap',
    ],
    [
      'overlapping tensors',
      rawSafetensors({ a: F32_2, b: { ...F32_2, data_offsets: [4, 12] } }, new Uint8Array(12)),
      'overlap',
    ],
    [
      'data shorter than the header says',
      rawSafetensors({ a: F32_2 }, new Uint8Array(4)),
      'truncated',
    ],
    [
      'bytes after the last tensor',
      rawSafetensors({ a: F32_2 }, new Uint8Array(9)),
      'trailing-bytes',
    ],
    [
      'a BOOL byte of 2',
      rawSafetensors(
        { a: { dtype: 'BOOL', shape: [2], data_offsets: [0, 2] } },
        Uint8Array.of(1, 2),
      ),
      'invalid-bool',
    ],
  ])('refuses %s', (_, bytes, reason) => {
    expect(reasonOf(bytes)).toBe(reason);
  });
});

describe('writeSafetensors', () => {
  it('writes name-sorted canonical headers padded to 8 bytes, the same bytes for any input order', () => {
    const a = { dtype: 'I32', shape: [1], data: Int32Array.of(1) } as const;
    const b = { dtype: 'U8', shape: [3], data: Uint8Array.of(1, 2, 3) } as const;
    const bytes = writeSafetensors({ b, a }, { z: '1', y: '2' });
    expect(
      writeSafetensors(
        new Map<string, SafetensorsTensor>([
          ['a', a],
          ['b', b],
        ]),
        { y: '2', z: '1' },
      ),
    ).toEqual(bytes);
    const length = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect(length % 8).toBe(0);
    expect(new TextDecoder().decode(bytes.subarray(8, 8 + length)).trimEnd()).toBe(
      '{"__metadata__":{"y":"2","z":"1"},"a":{"data_offsets":[0,4],"dtype":"I32","shape":[1]},' +
        '"b":{"data_offsets":[4,7],"dtype":"U8","shape":[3]}}',
    );
  });

  it.each<[string, Parameters<typeof writeSafetensors>[0], SafetensorsInvalidReason]>([
    [
      'a length that does not match the shape',
      { a: { dtype: 'F32', shape: [3], data: new Float32Array(2) } },
      'size-mismatch',
    ],
    [
      'the wrong typed array',
      { a: { dtype: 'F64', shape: [1], data: new Float32Array(1) } as never },
      'wrong-array',
    ],
    [
      'a negative dim',
      { a: { dtype: 'F32', shape: [-1], data: new Float32Array(0) } },
      'invalid-shape',
    ],
    [
      'a BOOL value of 2',
      { a: { dtype: 'BOOL', shape: [1], data: Uint8Array.of(2) } },
      'invalid-bool',
    ],
    [
      'the name __metadata__',
      { __metadata__: { dtype: 'U8', shape: [0], data: new Uint8Array(0) } },
      'reserved-name',
    ],
    ['the empty name', { '': { dtype: 'U8', shape: [0], data: new Uint8Array(0) } }, 'empty-name'],
  ])('refuses %s', (_, tensors, reason) => {
    let caught: unknown;
    try {
      writeSafetensors(tensors);
    } catch (error) {
      caught = error;
    }
    expect(isFlowfleetError(caught, 'FMT_SAFETENSORS_INVALID')).toBe(true);
    expect((caught as { details: { reason: string } }).details.reason).toBe(reason);
  });

  it('refuses a metadata value that is not a string', () => {
    expect(() => writeSafetensors({}, { n: 1 } as never)).toThrow(/__metadata__/);
  });
});
