import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { readSafetensors } from './read-safetensors.js';
import { writeSafetensors } from './write-safetensors.js';

/** A file from a raw header object and data bytes (for malformed cases the writer refuses). */
function rawFile(header: unknown, data: Uint8Array = new Uint8Array(0)): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return isFlowfleetError(error) ? error.code : 'not a FlowfleetError';
  }
  return undefined;
}

describe('readSafetensors', () => {
  it('round-trips F32, F64, I32 and I64 tensors and the metadata strings', () => {
    const bytes = writeSafetensors(
      {
        // 3 floats (12 bytes) put the next tensor off 8-byte alignment in the file.
        a_f32: { dtype: 'F32', shape: [3], data: Float32Array.of(1.5, -2, 0.1) },
        b_f64: { dtype: 'F64', shape: [2, 1], data: Float64Array.of(Math.PI, -1e-300) },
        c_i32: { dtype: 'I32', shape: [2], data: Int32Array.of(-7, 2 ** 31 - 1) },
        d_i64: { dtype: 'I64', shape: [2], data: BigInt64Array.of(-1n, 2n ** 53n + 1n) },
        e_empty: { dtype: 'F32', shape: [0, 4], data: new Float32Array(0) },
      },
      { format: 'test', note: 'x' },
    );
    const file = readSafetensors(bytes);
    expect(file.metadata).toEqual({ format: 'test', note: 'x' });
    expect(Object.keys(file.tensors).sort()).toEqual([
      'a_f32',
      'b_f64',
      'c_i32',
      'd_i64',
      'e_empty',
    ]);
    const { a_f32, b_f64, c_i32, d_i64, e_empty } = file.tensors;
    expect(a_f32?.data).toEqual(Float32Array.of(1.5, -2, 0.1));
    expect(a_f32?.data).toBeInstanceOf(Float32Array);
    expect(b_f64?.shape).toEqual([2, 1]);
    expect(b_f64?.data).toEqual(Float64Array.of(Math.PI, -1e-300));
    expect(c_i32?.data).toEqual(Int32Array.of(-7, 2 ** 31 - 1));
    expect(d_i64?.data).toEqual(BigInt64Array.of(-1n, 2n ** 53n + 1n));
    expect(e_empty?.data.length).toBe(0);
  });

  it('answers copies that outlive changes to the input bytes, even from an offset view', () => {
    const bytes = writeSafetensors({ x: { dtype: 'F64', shape: [1], data: Float64Array.of(7) } });
    const padded = new Uint8Array(bytes.length + 3);
    padded.set(bytes, 3);
    const file = readSafetensors(padded.subarray(3));
    padded.fill(0);
    expect(file.tensors['x']?.data).toEqual(Float64Array.of(7));
  });

  it('reads a file without __metadata__ as empty metadata', () => {
    const data = new Uint8Array(new Int32Array([5]).buffer);
    const file = readSafetensors(
      rawFile({ x: { dtype: 'I32', shape: [], data_offsets: [0, 4] } }, data),
    );
    expect(file.metadata).toEqual({});
    expect(file.tensors['x']?.data).toEqual(Int32Array.of(5));
  });

  const f32 = new Uint8Array(16);
  it.each([
    ['shorter than 8 bytes', new Uint8Array(4)],
    [
      'a header length past the end',
      (() => {
        const b = new Uint8Array(16);
        new DataView(b.buffer).setBigUint64(0, 100n, true);
        return b;
      })(),
    ],
    [
      'a header that is not JSON',
      (() => {
        const b = new Uint8Array(12);
        new DataView(b.buffer).setBigUint64(0, 4n, true);
        b.set(new TextEncoder().encode('{nop'), 8);
        return b;
      })(),
    ],
    ['a header that is an array', rawFile([1, 2])],
    [
      'an unsupported dtype',
      rawFile({ x: { dtype: 'F16', shape: [2], data_offsets: [0, 4] } }, f32),
    ],
    ['a negative dim', rawFile({ x: { dtype: 'F32', shape: [-1], data_offsets: [0, 4] } }, f32)],
    [
      'offsets that do not match the shape',
      rawFile({ x: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } }, f32),
    ],
    ['data past the end', rawFile({ x: { dtype: 'F32', shape: [8], data_offsets: [0, 32] } }, f32)],
    [
      'overlapping tensors',
      rawFile(
        {
          x: { dtype: 'F32', shape: [2], data_offsets: [0, 8] },
          y: { dtype: 'F32', shape: [2], data_offsets: [4, 12] },
        },
        f32,
      ),
    ],
    ['metadata that is not strings', rawFile({ __metadata__: { n: 1 } })],
  ])('refuses %s with CLIENT_RESULT_INVALID', (_name, bytes) => {
    expect(codeOf(() => readSafetensors(bytes))).toBe('CLIENT_RESULT_INVALID');
  });
});

describe('writeSafetensors', () => {
  it('pads the header to 8 bytes with spaces and writes tensors in name order', () => {
    const bytes = writeSafetensors({
      z: { dtype: 'I32', shape: [1], data: Int32Array.of(1) },
      a: { dtype: 'I32', shape: [1], data: Int32Array.of(2) },
    });
    const headerBytes = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect(headerBytes % 8).toBe(0);
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerBytes)));
    expect(header.a.data_offsets).toEqual([0, 4]);
    expect(header.z.data_offsets).toEqual([4, 8]);
  });

  it.each([
    ['a wrong array type', { x: { dtype: 'F32', shape: [1], data: Float64Array.of(1) } }],
    [
      'a length that does not match the shape',
      { x: { dtype: 'F32', shape: [2], data: Float32Array.of(1) } },
    ],
    ['a reserved name', { __metadata__: { dtype: 'F32', shape: [1], data: Float32Array.of(1) } }],
  ] as const)('refuses %s with CLIENT_INVALID_OPTIONS', (_name, tensors) => {
    expect(codeOf(() => writeSafetensors(tensors as never))).toBe('CLIENT_INVALID_OPTIONS');
  });
});
