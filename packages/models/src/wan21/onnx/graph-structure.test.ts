import { describe, expect, it } from 'vitest';
import { isFlowfleetError } from '@flowfleet/errors';
import type { TensorData } from '@flowfleet/platform';
import { parameterShapes, textEncoderParameterShapes } from '../parameter-shapes.js';
import { WAN21_MINI } from '../wan21-config.js';
import { decodeOnnxModelSummary } from '@flowfleet/formats';
import { buildDitOnnx } from './dit-graph.js';
import { buildTextEncoderOnnx } from './text-encoder-graph.js';

function fakeWeights(shapes: ReadonlyMap<string, readonly number[]>): Map<string, TensorData> {
  const weights = new Map<string, TensorData>();
  for (const [name, dims] of shapes) {
    const n = dims.reduce((a, b) => a * b, 1);
    weights.set(name, { dtype: 'float32', dims: [...dims], data: new Float32Array(n).fill(0.5) });
  }
  return weights;
}

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return isFlowfleetError(error) ? error.code : 'not-flowfleet';
  }
  return undefined;
}

describe('buildDitOnnx structure', () => {
  const shapes = parameterShapes(WAN21_MINI);

  it('eager: IR 8, opset 17, data inputs then every weight by name, symbolic dims, no initializers', () => {
    const model = decodeOnnxModelSummary(buildDitOnnx(WAN21_MINI, { form: 'eager' }));
    expect(model.irVersion).toBe(8);
    expect(model.opsetImports).toEqual([{ domain: '', version: 17 }]);
    expect(model.initializers).toEqual([]);
    expect(model.inputs.map((i) => i.name)).toEqual([
      'latent',
      'timestep',
      'context',
      'rope_cos',
      'rope_sin',
      ...shapes.keys(),
    ]);
    expect(model.inputs[0]).toEqual({
      name: 'latent',
      elemType: 'float',
      dims: ['batch', 4, 'frames', 'height', 'width'],
    });
    expect(model.inputs[3]?.dims).toEqual(['tokens', 16]);
    const q = model.inputs.find((i) => i.name === 'blocks.1.self_attn.q.weight');
    expect(q?.dims).toEqual([128, 128]);
    expect(model.outputs).toEqual([
      { name: 'velocity', elemType: 'float', dims: ['batch', 4, 'frames', 'height', 'width'] },
    ]);
    expect(model.metadata).toMatchObject({
      'flowfleet.component': 'dit',
      'flowfleet.form': 'eager',
    });
  });

  it('captured: three fixed-shape inputs, weights and rope tables baked as raw float32', () => {
    const bytes = buildDitOnnx(WAN21_MINI, {
      form: 'captured',
      weights: fakeWeights(shapes),
      batch: 3,
      frames: 2,
      height: 8,
      width: 12,
    });
    const model = decodeOnnxModelSummary(bytes);
    expect(model.inputs).toEqual([
      { name: 'latent', elemType: 'float', dims: [3, 4, 2, 8, 12] },
      { name: 'timestep', elemType: 'float', dims: [3] },
      { name: 'context', elemType: 'float', dims: [3, 16, 64] },
    ]);
    expect(model.outputs[0]?.dims).toEqual([3, 4, 2, 8, 12]);
    expect(model.initializers.map((t) => t.name)).toEqual([
      'rope_cos',
      'rope_sin',
      ...shapes.keys(),
    ]);
    expect(model.initializers[0]).toEqual({
      name: 'rope_cos',
      elemType: 'float',
      dims: [2 * 4 * 6, 16],
      rawDataBytes: 2 * 4 * 6 * 16 * 4,
    });
    for (const t of model.initializers.slice(2)) {
      expect(t.dims).toEqual(shapes.get(t.name));
      expect(t.rawDataBytes).toBe(t.dims.reduce<number>((a, b) => a * Number(b), 1) * 4);
    }
  });

  it('rejects bad options with coded errors', () => {
    const weights = fakeWeights(shapes);
    const dims = { batch: 1, frames: 4, height: 16, width: 16 };
    expect(codeOf(() => buildDitOnnx(WAN21_MINI, { form: 'captured', ...dims }))).toBe(
      'MODEL_ONNX_OPTIONS_INVALID',
    );
    expect(codeOf(() => buildDitOnnx(WAN21_MINI, { form: 'captured', weights, batch: 1 }))).toBe(
      'MODEL_ONNX_OPTIONS_INVALID',
    );
    expect(
      codeOf(() => buildDitOnnx(WAN21_MINI, { form: 'captured', weights, ...dims, height: 15 })),
    ).toBe('MODEL_ONNX_OPTIONS_INVALID');
    expect(
      codeOf(() => buildDitOnnx(WAN21_MINI, { form: 'captured', weights, ...dims, batch: 0 })),
    ).toBe('MODEL_ONNX_OPTIONS_INVALID');
    expect(codeOf(() => buildDitOnnx(WAN21_MINI, { form: 'lazy' as 'eager' }))).toBe(
      'MODEL_ONNX_OPTIONS_INVALID',
    );
    const missing = new Map(weights);
    missing.delete('head.head.bias');
    expect(
      codeOf(() => buildDitOnnx(WAN21_MINI, { form: 'captured', weights: missing, ...dims })),
    ).toBe('MODEL_WEIGHTS_MISMATCH');
    const short = new Map(weights);
    short.set('head.head.bias', { dtype: 'float32', dims: [16], data: new Float32Array(3) });
    expect(
      codeOf(() => buildDitOnnx(WAN21_MINI, { form: 'captured', weights: short, ...dims })),
    ).toBe('MODEL_WEIGHTS_MISMATCH');
  });

  it('is deterministic: the same options give the same bytes', () => {
    const a = buildDitOnnx(WAN21_MINI, { form: 'eager' });
    const b = buildDitOnnx(WAN21_MINI, { form: 'eager' });
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
  });
});

describe('buildTextEncoderOnnx structure', () => {
  const shapes = textEncoderParameterShapes(WAN21_MINI);

  it('eager: int64 tokens [batch, L] plus prefixed weights; output context', () => {
    const model = decodeOnnxModelSummary(buildTextEncoderOnnx(WAN21_MINI, { form: 'eager' }));
    expect(model.inputs[0]).toEqual({ name: 'tokens', elemType: 'int64', dims: ['batch', 16] });
    expect(model.inputs.slice(1).map((i) => i.name)).toEqual([...shapes.keys()]);
    expect(model.inputs.every((i, k) => k === 0 || i.name.startsWith('text_encoder.'))).toBe(true);
    expect(model.outputs).toEqual([
      { name: 'context', elemType: 'float', dims: ['batch', 16, 64] },
    ]);
    expect(model.initializers).toEqual([]);
  });

  it('captured: fixed batch, weights baked', () => {
    const model = decodeOnnxModelSummary(
      buildTextEncoderOnnx(WAN21_MINI, {
        form: 'captured',
        weights: fakeWeights(shapes),
        batch: 2,
      }),
    );
    expect(model.inputs).toEqual([{ name: 'tokens', elemType: 'int64', dims: [2, 16] }]);
    expect(model.initializers.map((t) => t.name)).toEqual([...shapes.keys()]);
    expect(codeOf(() => buildTextEncoderOnnx(WAN21_MINI, { form: 'captured', batch: 2 }))).toBe(
      'MODEL_ONNX_OPTIONS_INVALID',
    );
  });
});
