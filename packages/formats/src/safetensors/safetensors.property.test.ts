import { isFlowfleetError } from '@flowfleet/errors';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  SAFETENSORS_ARRAY_OF,
  SAFETENSORS_DTYPES,
  SAFETENSORS_ITEM_BYTES,
  type SafetensorsDtype,
  type SafetensorsTensor,
} from './dtypes.js';
import { rawSafetensors } from '../../test-support/raw-safetensors.js';
import { readSafetensors } from './read-safetensors.js';
import { writeSafetensors } from './write-safetensors.js';

/** A tensor of `dtype` and `shape` whose bytes are `raw` (any bytes, BOOL ones made 0/1). */
function tensorOf(dtype: SafetensorsDtype, shape: number[], raw: Uint8Array): SafetensorsTensor {
  const bytes = dtype === 'BOOL' ? raw.map((b) => b & 1) : raw.slice();
  const count = shape.reduce((a, b) => a * b, 1);
  const data = new SAFETENSORS_ARRAY_OF[dtype](bytes.buffer as ArrayBuffer, 0, count);
  return { dtype, shape, data } as SafetensorsTensor;
}

const tensorArb = fc
  .tuple(
    fc.constantFrom(...SAFETENSORS_DTYPES),
    fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 3 }),
  )
  .chain(([dtype, shape]) => {
    const size = shape.reduce((a, b) => a * b, 1) * SAFETENSORS_ITEM_BYTES[dtype];
    return fc
      .uint8Array({ minLength: size, maxLength: size })
      .map((raw) => tensorOf(dtype, shape, raw));
  });

const filesArb = fc.record({
  tensors: fc.dictionary(fc.string({ minLength: 1, maxLength: 6, unit: 'binary' }), tensorArb, {
    maxKeys: 6,
  }),
  metadata: fc.dictionary(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), {
    maxKeys: 3,
  }),
});

/** Compares tensors bit for bit (NaN payloads and -0 included) through their bytes. */
function bytesOf(tensor: SafetensorsTensor): number[] {
  const { data } = tensor;
  return Array.from(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
}

function reasonOf(bytes: Uint8Array): string {
  try {
    readSafetensors(bytes);
    return 'accepted';
  } catch (error) {
    if (!isFlowfleetError(error, 'FMT_SAFETENSORS_INVALID')) throw error;
    return String(error.details['reason']);
  }
}

describe('safetensors codec (properties)', () => {
  it('decodes what it encodes, bit for bit, and encodes deterministically', () => {
    fc.assert(
      fc.property(filesArb, ({ tensors, metadata }) => {
        const names = Object.keys(tensors).filter((name) => name !== '__metadata__');
        const input = Object.fromEntries(names.map((name) => [name, tensors[name]!]));
        const bytes = writeSafetensors(input, metadata);
        const reversed = new Map(names.reverse().map((name) => [name, input[name]!]));
        expect(writeSafetensors(reversed, metadata)).toEqual(bytes);
        expect(Number(new DataView(bytes.buffer).getBigUint64(0, true)) % 8).toBe(0);
        const read = readSafetensors(bytes);
        expect(read.metadata).toEqual(metadata);
        expect(new Set(read.tensors.keys())).toEqual(new Set(names));
        for (const name of names) {
          const back = read.tensors.get(name)!;
          expect(back.dtype).toBe(input[name]!.dtype);
          expect(back.shape).toEqual(input[name]!.shape);
          expect(bytesOf(back)).toEqual(bytesOf(input[name]!));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('refuses any shift of one tensor span: it leaves a gap, an overlap or a wrong length', () => {
    const layoutArb = fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 5 });
    fc.assert(
      fc.property(layoutArb, fc.nat(), fc.integer({ min: -6, max: 6 }), (sizes, pick, delta) => {
        fc.pre(delta !== 0);
        const header: Record<string, unknown> = {};
        let offset = 0;
        sizes.forEach((size, i) => {
          header[`t${i}`] = { dtype: 'U8', shape: [size], data_offsets: [offset, offset + size] };
          offset += size;
        });
        const victim = header[`t${pick % sizes.length}`] as { data_offsets: number[] };
        const [begin, end] = victim.data_offsets as [number, number];
        fc.pre(begin + delta >= 0);
        victim.data_offsets = [begin + delta, end + delta];
        const reason = reasonOf(rawSafetensors(header, new Uint8Array(offset)));
        expect(['gap', 'overlap', 'truncated', 'trailing-bytes']).toContain(reason);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses a file cut short or grown by any number of bytes', () => {
    fc.assert(
      fc.property(filesArb, fc.integer({ min: 1, max: 64 }), fc.boolean(), (file, k, grow) => {
        const bytes = writeSafetensors(file.tensors, file.metadata);
        const dataBytes =
          bytes.length - 8 - Number(new DataView(bytes.buffer).getBigUint64(0, true));
        fc.pre(grow || k <= dataBytes);
        const changed = grow
          ? Uint8Array.from([...bytes, ...new Uint8Array(k)])
          : bytes.subarray(0, bytes.length - k);
        expect(reasonOf(changed)).toBe(grow ? 'trailing-bytes' : 'truncated');
      }),
      { numRuns: 200 },
    );
  });

  it('refuses any other dtype size for the same span', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...SAFETENSORS_DTYPES),
        fc.constantFrom(...SAFETENSORS_DTYPES),
        fc.integer({ min: 1, max: 6 }),
        (written, claimed, count) => {
          fc.pre(SAFETENSORS_ITEM_BYTES[written] !== SAFETENSORS_ITEM_BYTES[claimed]);
          const size = count * SAFETENSORS_ITEM_BYTES[written];
          const header = { t: { dtype: claimed, shape: [count], data_offsets: [0, size] } };
          expect(reasonOf(rawSafetensors(header, new Uint8Array(size)))).toBe('size-mismatch');
        },
      ),
    );
  });

  it('answers any byte string with tensors or FMT_SAFETENSORS_INVALID, never another error', () => {
    const header = fc.oneof(
      fc.json(),
      fc.string(),
      fc.constant('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'),
    );
    fc.assert(
      fc.property(header, fc.uint8Array({ maxLength: 16 }), (text, data) => {
        reasonOf(rawSafetensors(text, data));
      }),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        reasonOf(bytes);
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses every truncation of a file, and every single-byte corruption of its header', () => {
    const bytes = writeSafetensors(
      { w: { dtype: 'F32', shape: [2], data: Float32Array.of(1, 2) } },
      { k: 'v' },
    );
    expect(reasonOf(bytes)).toBe('accepted');
    for (let end = 0; end < bytes.length; end++) {
      expect(reasonOf(bytes.subarray(0, end)), `cut at ${end}`).not.toBe('accepted');
    }
    const headerEnd = 8 + Number(new DataView(bytes.buffer).getBigUint64(0, true));
    for (let i = 0; i < headerEnd; i++) {
      for (const value of [0x00, 0x20, 0x22, 0x7d, 0xff]) {
        if (bytes[i] === value) continue;
        const corrupt = bytes.slice();
        corrupt[i] = value;
        // A change inside a string or the padding may leave a valid file; then it must be whole.
        if (reasonOf(corrupt) === 'accepted') {
          const read = readSafetensors(corrupt);
          const total = [...read.tensors.values()].reduce((n, t) => n + t.data.byteLength, 0);
          expect(total, `byte ${i} = ${value}`).toBe(8);
        }
      }
    }
  });
});
