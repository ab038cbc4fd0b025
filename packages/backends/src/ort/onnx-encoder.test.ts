import { describe, expect, it } from 'vitest';
import { encodeOnnxModel } from './onnx-encoder.js';
import { PROBE_MODEL_BYTES } from './probe-model.js';

describe('encodeOnnxModel', () => {
  it('reproduces the hand-encoded probe model byte for byte', () => {
    const encoded = encodeOnnxModel({
      inputs: [{ name: 'x', type: 'float32', dims: [1] }],
      outputs: [{ name: 'y', type: 'float32', dims: [1] }],
      nodes: [{ opType: 'Identity', inputs: ['x'], outputs: ['y'] }],
    });
    expect(PROBE_MODEL_BYTES.length).toBe(63);
    expect([...encoded]).toEqual([...PROBE_MODEL_BYTES]);
  });

  it('encodes varints of multi-byte and int64 values', () => {
    const model = encodeOnnxModel({
      inputs: [{ name: 'x', type: 'int64', dims: [300, 'n'] }],
      outputs: [{ name: 'x', type: 'int64', dims: [300, 'n'] }],
      nodes: [],
      irVersion: 8,
    });
    // ir_version, then the graph; 300 = 0b10_0101100 → varint ac 02 appears as a dim_value.
    expect([...model.subarray(0, 2)]).toEqual([0x08, 0x08]);
    const hex = Buffer.from(model).toString('hex');
    expect(hex).toContain('08ac02');
    // dim_param "n" is field 2 (0x12), length 1, "n".
    expect(hex).toContain('12016e');
  });
});
