// (e) the 1.3B config builds an eager graph: no initializers (weights are inputs), so the bytes
// are small; it is neither run nor built with weights.
import { describe, expect, it } from 'vitest';
import { isFlowfleetError } from '@flowfleet/errors';
import { decodeOnnxModelSummary } from '@flowfleet/formats';
import {
  WAN21_1_3B,
  buildDitOnnx,
  buildTextEncoderOnnx,
  parameterCount,
  parameterShapes,
} from '@flowfleet/models/wan21';

describe('wan21-1.3b eager graphs', () => {
  it('builds the dit with every 1.3B weight as a symbolic-batch input', () => {
    const bytes = buildDitOnnx(WAN21_1_3B, { form: 'eager' });
    expect(bytes.length).toBeLessThan(2_000_000);
    const model = decodeOnnxModelSummary(bytes);
    const shapes = parameterShapes(WAN21_1_3B);
    expect(model.initializers).toHaveLength(0);
    expect(model.inputs).toHaveLength(5 + shapes.size);
    expect(model.inputs[0]?.dims).toEqual(['batch', 16, 'frames', 'height', 'width']);
    expect(model.inputs[2]?.dims).toEqual(['batch', 512, 4096]);
    expect(model.inputs[3]?.dims).toEqual(['tokens', 64]);
    const declared = model.inputs.slice(5).reduce((n, i) => {
      return n + i.dims.reduce<number>((a, d) => a * Number(d), 1);
    }, 0);
    expect(declared).toBe(parameterCount(WAN21_1_3B));
    expect(declared).toBeGreaterThan(1.2e9);
    expect(model.inputs.find((i) => i.name === 'blocks.29.ffn.0.weight')?.dims).toEqual([
      8960, 1536,
    ]);
    expect(model.nodes.filter((n) => n.opType === 'Softmax')).toHaveLength(60);
  });

  it('refuses a captured 1.3B dit up front: 5.7 GB of weights exceed one protobuf', () => {
    let error: unknown;
    try {
      buildDitOnnx(WAN21_1_3B, {
        form: 'captured',
        weights: new Map(),
        batch: 1,
        frames: 4,
        height: 16,
        width: 16,
      });
    } catch (e) {
      error = e;
    }
    expect(isFlowfleetError(error, 'MODEL_ONNX_OPTIONS_INVALID')).toBe(true);
    expect((error as Error).message).toMatch(/limit of one ONNX protobuf; use the eager form/);
  });

  it('builds the text encoder', () => {
    const model = decodeOnnxModelSummary(buildTextEncoderOnnx(WAN21_1_3B, { form: 'eager' }));
    expect(model.inputs[0]).toEqual({ name: 'tokens', elemType: 'int64', dims: ['batch', 512] });
    expect(model.outputs[0]?.dims).toEqual(['batch', 512, 4096]);
  });
});
