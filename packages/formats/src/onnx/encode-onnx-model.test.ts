import { describe, expect, it } from 'vitest';
import { decodeOnnxModelSummary } from './decode-onnx-model.js';
import { encodeOnnxModel } from './encode-onnx-model.js';
import type { OnnxModel } from './onnx-types.js';

const MODEL: OnnxModel = {
  irVersion: 8,
  opsetImports: [{ domain: '', version: 17 }],
  producerName: 'flowfleet',
  producerVersion: '1',
  graph: {
    name: 'g',
    inputs: [{ name: 'x', elemType: 'int64', dims: [300, 'n'] }],
    outputs: [{ name: 'y', elemType: 'float', dims: [300, 'n'] }],
    nodes: [
      {
        opType: 'Cast',
        name: 'cast',
        inputs: ['x'],
        outputs: ['c'],
        attributes: { to: { kind: 'int', value: 1 } },
      },
      { opType: 'Add', name: 'add', inputs: ['c', 'w'], outputs: ['y'] },
    ],
    initializers: [{ name: 'w', elemType: 'float', dims: [1], data: Float32Array.of(2) }],
  },
  metadata: { 'flowfleet.model': 'test' },
};

describe('encodeOnnxModel', () => {
  it('reads back to the same structure', () => {
    const summary = decodeOnnxModelSummary(encodeOnnxModel(MODEL));
    expect(summary).toMatchObject({
      irVersion: 8,
      producerName: 'flowfleet',
      opsetImports: [{ domain: '', version: 17 }],
      graphName: 'g',
      inputs: [{ name: 'x', elemType: 'int64', dims: [300, 'n'] }],
      outputs: [{ name: 'y', elemType: 'float', dims: [300, 'n'] }],
      initializers: [{ name: 'w', elemType: 'float', dims: [1], rawDataBytes: 4 }],
      metadata: { 'flowfleet.model': 'test' },
    });
    expect(summary.nodes.map((n) => n.opType)).toEqual(['Cast', 'Add']);
  });

  it('writes multi-byte varints and symbolic dims as protobuf specifies', () => {
    const hex = Buffer.from(encodeOnnxModel(MODEL)).toString('hex');
    // 300 = 0b10_0101100 → varint ac 02 as a dim_value; dim_param "n" is field 2, length 1.
    expect(hex).toContain('08ac02');
    expect(hex).toContain('12016e');
  });

  it('omits optional fields that are absent and writes an empty string that is present', () => {
    const bare = encodeOnnxModel({
      ...MODEL,
      producerName: undefined,
      producerVersion: undefined,
    } as never);
    const full = encodeOnnxModel(MODEL);
    expect(decodeOnnxModelSummary(bare).producerName).toBe('');
    // producer_name "flowfleet" (2 + 9 bytes) and producer_version "1" (2 + 1 bytes).
    expect(full.length - bare.length).toBe(14);
    const noDomain = encodeOnnxModel({ ...MODEL, opsetImports: [{ version: 17 }] });
    expect(full.length - noDomain.length).toBe(2);
  });
});
