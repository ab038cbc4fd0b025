import { encodeOnnxModel } from '@flowfleet/formats';
import { describe, expect, it } from 'vitest';
import { PROBE_MODEL_BYTES } from './probe-model.js';

describe('PROBE_MODEL_BYTES', () => {
  it('is what formats’ ONNX writer encodes for y = Identity(x), byte for byte', () => {
    const encoded = encodeOnnxModel({
      irVersion: 8,
      opsetImports: [{ version: 13 }],
      graph: {
        name: 'g',
        inputs: [{ name: 'x', elemType: 'float', dims: [1] }],
        outputs: [{ name: 'y', elemType: 'float', dims: [1] }],
        nodes: [{ opType: 'Identity', inputs: ['x'], outputs: ['y'] }],
      },
    });
    expect(PROBE_MODEL_BYTES.length).toBe(63);
    expect([...encoded]).toEqual([...PROBE_MODEL_BYTES]);
  });
});
