import { describe, expect, it } from 'vitest';
import { isFlowfleetError } from '@flowfleet/errors';
import { intField, messages, readProtoFields, stringField, varints } from './proto-reader.js';
import { ProtoWriter } from './proto-writer.js';

describe('ProtoWriter / readProtoFields', () => {
  it('round-trips varints, negative int64, floats, strings and nested messages', () => {
    const inner = new ProtoWriter().string(1, 'héllo').varint(2, 300);
    const bytes = new ProtoWriter()
      .varint(1, 0)
      .varint(2, 2 ** 40 + 5)
      .varint(3, -1)
      .float(4, 1.5)
      .message(5, inner)
      .bytes(6, new Uint8Array([9, 8, 7]))
      .finish();
    const fields = readProtoFields(bytes);
    expect(intField(fields, 1)).toBe(0);
    expect(intField(fields, 2)).toBe(2 ** 40 + 5);
    expect(intField(fields, 3)).toBe(-1);
    const f = fields.find((x) => x.field === 4);
    expect(f?.wireType).toBe(5);
    expect(new Float32Array(new Uint32Array([f?.value as number]).buffer)[0]).toBe(1.5);
    const nested = readProtoFields(messages(fields, 5)[0]!);
    expect(stringField(nested, 1)).toBe('héllo');
    expect(intField(nested, 2)).toBe(300);
    expect([...messages(fields, 6)[0]!]).toEqual([9, 8, 7]);
  });

  it('encodes -1 as the 10-byte two’s complement varint protobuf specifies', () => {
    const bytes = new ProtoWriter().varint(1, -1).finish();
    expect([...bytes]).toEqual([8, 255, 255, 255, 255, 255, 255, 255, 255, 255, 1]);
  });

  it('reads packed and unpacked repeated varints alike', () => {
    const unpacked = new ProtoWriter().varint(1, 3).varint(1, 270).finish();
    const packed = new ProtoWriter().bytes(1, new Uint8Array([3, 0x8e, 0x02])).finish();
    expect(varints(readProtoFields(unpacked), 1)).toEqual([3n, 270n]);
    expect(varints(readProtoFields(packed), 1)).toEqual([3n, 270n]);
  });

  it('keeps a large bytes field by reference until finish and copies it once', () => {
    const big = new Uint8Array(1 << 20).fill(7);
    const w = new ProtoWriter().bytes(9, big);
    expect(w.length).toBe(big.length + 4);
    const out = w.finish();
    expect(out.length).toBe(big.length + 4);
    expect(out[out.length - 1]).toBe(7);
  });

  it('rejects truncated input with FMT_ONNX_MALFORMED', () => {
    const bytes = new ProtoWriter().string(1, 'abcdef').finish().subarray(0, 4);
    let error: unknown;
    try {
      readProtoFields(bytes);
    } catch (e) {
      error = e;
    }
    expect(isFlowfleetError(error, 'FMT_ONNX_MALFORMED')).toBe(true);
  });
});
