import { describe, expect, it } from 'vitest';
import { isFlowfleetError } from '@flowfleet/errors';
import { readSafetensors } from './read-safetensors.js';
import { writeSafetensors } from './write-safetensors.js';

// Hand-built safetensors buffers, independent of writeSafetensors.
/** Builds a safetensors buffer from a header object and raw data bytes. */
function buildSafetensors(header: unknown, data: Uint8Array, headerPad = 0): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(header) + ' '.repeat(headerPad));
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

/** Builds a buffer whose header bytes are given verbatim. */
function buildRaw(headerBytes: Uint8Array, data: Uint8Array, declaredLength?: bigint): Uint8Array {
  const out = new Uint8Array(8 + headerBytes.length + data.length);
  new DataView(out.buffer).setBigUint64(0, declaredLength ?? BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  out.set(data, 8 + headerBytes.length);
  return out;
}

/** Little-endian bytes of float32 values. */
function f32Bytes(values: number[]): Uint8Array {
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  values.forEach((v, i) => view.setFloat32(4 * i, v, true));
  return bytes;
}

function reasonOf(bytes: Uint8Array): string {
  try {
    readSafetensors(bytes);
  } catch (error) {
    if (!isFlowfleetError(error, 'MODEL_SAFETENSORS_INVALID')) throw error;
    return String((error.details as { reason: string }).reason);
  }
  return 'accepted';
}

const goodHeader = {
  __metadata__: { format: 'pt' },
  a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] },
  b: { dtype: 'F32', shape: [1, 1], data_offsets: [8, 12] },
};
const goodData = f32Bytes([1.5, -2, 3.25]);

describe('readSafetensors', () => {
  it('reads a hand-built file with metadata', () => {
    const file = readSafetensors(buildSafetensors(goodHeader, goodData, 5));
    expect(file.metadata).toEqual({ format: 'pt' });
    expect(file.tensors.get('a')).toEqual({
      dtype: 'float32',
      dims: [2],
      data: new Float32Array([1.5, -2]),
    });
    expect(file.tensors.get('b')?.dims).toEqual([1, 1]);
    expect(file.storedDtypes.get('b')).toBe('F32');
  });

  it('decodes F16, BF16, F64, I32 and I64 (and zero-size tensors)', () => {
    const data = new Uint8Array([
      0x00,
      0x3c,
      0x01,
      0x00, // F16: 1, smallest subnormal
      0x80,
      0x3f,
      0x80,
      0x7f, // BF16: 1, +inf
      ...new Uint8Array(new Float64Array([0.1]).buffer), // F64
      0xff,
      0xff,
      0xff,
      0xff, // I32: -1
      0x02,
      0,
      0,
      0,
      0,
      0,
      0,
      0x80, // I64: -2^63 + 2
    ]);
    const file = readSafetensors(
      buildSafetensors(
        {
          h: { dtype: 'F16', shape: [2], data_offsets: [0, 4] },
          bf: { dtype: 'BF16', shape: [2], data_offsets: [4, 8] },
          d: { dtype: 'F64', shape: [], data_offsets: [8, 16] },
          e: { dtype: 'F32', shape: [0, 3], data_offsets: [16, 16] },
          i: { dtype: 'I32', shape: [1], data_offsets: [16, 20] },
          l: { dtype: 'I64', shape: [1], data_offsets: [20, 28] },
        },
        data,
      ),
    );
    expect([...file.tensors.get('h')!.data]).toEqual([1, 2 ** -24]);
    expect([...file.tensors.get('bf')!.data]).toEqual([1, Infinity]);
    expect([...file.tensors.get('d')!.data]).toEqual([Math.fround(0.1)]);
    expect(file.tensors.get('d')!.dims).toEqual([]);
    expect(file.tensors.get('e')!.data.length).toBe(0);
    expect(file.tensors.get('i')).toEqual({
      dtype: 'int32',
      dims: [1],
      data: new Int32Array([-1]),
    });
    expect(file.tensors.get('l')!.data).toEqual(new BigInt64Array([-(2n ** 63n) + 2n]));
    expect(file.storedDtypes.get('bf')).toBe('BF16');
  });

  it('rejects malformed headers and layouts with coded reasons', () => {
    const f32 = (shape: number[], offsets: number[]) => ({
      dtype: 'F32',
      shape,
      data_offsets: offsets,
    });
    const cases: [string, Uint8Array][] = [
      ['short', new Uint8Array(7)],
      ['length past end', buildRaw(new Uint8Array(4), new Uint8Array(0), 100n)],
      ['length huge', buildRaw(new Uint8Array(4), new Uint8Array(0), 2n ** 63n)],
      ['not json', buildRaw(new TextEncoder().encode('{"a":'), new Uint8Array(0))],
      ['not utf-8', buildRaw(new Uint8Array([0x7b, 0xff, 0x7d]), new Uint8Array(0))],
      ['array header', buildSafetensors([1, 2], new Uint8Array(0))],
      ['null header', buildSafetensors(null, new Uint8Array(0))],
      [
        'unknown dtype',
        buildSafetensors(
          { a: { dtype: 'F8', shape: [1], data_offsets: [0, 1] } },
          new Uint8Array(1),
        ),
      ],
      [
        'bool dtype',
        buildSafetensors(
          { a: { dtype: 'BOOL', shape: [1], data_offsets: [0, 1] } },
          new Uint8Array(1),
        ),
      ],
      ['entry not object', buildSafetensors({ a: 3 }, new Uint8Array(0))],
      ['negative dim', buildSafetensors({ a: f32([-1], [0, 4]) }, new Uint8Array(4))],
      ['fractional dim', buildSafetensors({ a: f32([1.5], [0, 4]) }, new Uint8Array(4))],
      ['bad offsets', buildSafetensors({ a: f32([1], [0]) }, new Uint8Array(4))],
      ['end before begin', buildSafetensors({ a: f32([0], [4, 0]) }, new Uint8Array(4))],
      ['size mismatch', buildSafetensors({ a: f32([2], [0, 4]) }, new Uint8Array(4))],
      [
        'overlap',
        buildSafetensors({ a: f32([2], [0, 8]), b: f32([1], [4, 8]) }, new Uint8Array(8)),
      ],
      ['gap', buildSafetensors({ a: f32([1], [0, 4]), b: f32([1], [8, 12]) }, new Uint8Array(12))],
      ['not from zero', buildSafetensors({ a: f32([1], [4, 8]) }, new Uint8Array(8))],
      ['past end', buildSafetensors({ a: f32([2], [0, 8]) }, new Uint8Array(4))],
      ['trailing', buildSafetensors({ a: f32([1], [0, 4]) }, new Uint8Array(5))],
      ['metadata not strings', buildSafetensors({ __metadata__: { a: 1 } }, new Uint8Array(0))],
      ['metadata not object', buildSafetensors({ __metadata__: 'x' }, new Uint8Array(0))],
    ];
    const reasons = new Map(cases.map(([name, bytes]) => [name, reasonOf(bytes)]));
    for (const [name, reason] of reasons) expect(reason, name).not.toBe('accepted');
    expect(reasons.get('overlap')).toBe('tensor data overlaps');
    expect(reasons.get('gap')).toBe('gap between tensor data');
    expect(reasons.get('trailing')).toBe('trailing bytes after the last tensor');
    expect(reasons.get('size mismatch')).toBe(
      'shape × item size does not match the data_offsets span',
    );
    expect(reasons.get('unknown dtype')).toBe('unknown or unsupported dtype');
  });

  it('fails with a coded error at every truncation point', () => {
    const bytes = buildSafetensors(goodHeader, goodData);
    expect(reasonOf(bytes)).toBe('accepted');
    for (let end = 0; end < bytes.length; end++) {
      expect(reasonOf(bytes.subarray(0, end)), `truncated at ${end}`).not.toBe('accepted');
    }
  });

  it('fails with a coded error (never a crash) for every single-byte corruption of the header', () => {
    const bytes = writeSafetensors({
      w: { dtype: 'float32', dims: [2], data: new Float32Array([1, 2]) },
    });
    const headerEnd = 8 + Number(new DataView(bytes.buffer).getBigUint64(0, true));
    for (let i = 0; i < headerEnd; i++) {
      for (const value of [0x00, 0x22, 0x7d, 0xff]) {
        const corrupt = bytes.slice();
        if (corrupt[i] === value) continue;
        corrupt[i] = value;
        try {
          const file = readSafetensors(corrupt);
          // A corruption may still be a valid file (e.g. inside a padding space); then it must be whole.
          let total = 0;
          for (const t of file.tensors.values()) total += t.data.byteLength;
          expect(total).toBeLessThanOrEqual(8);
        } catch (error) {
          expect(isFlowfleetError(error, 'MODEL_SAFETENSORS_INVALID'), `byte ${i} = ${value}`).toBe(
            true,
          );
        }
      }
    }
  });
});
