import { describe, expect, it } from 'vitest';
import { decodeOnnxModelSummary } from '@flowfleet/formats';
import type { ModelComponentSpec } from '../../cards/model-card.js';
import { wan21MiniCard } from '../wan21-mini-card.js';

const specOf = (id: string): ModelComponentSpec =>
  wan21MiniCard.components.find((c) => c.id === id)!;

const inputDimsOf = (bytes: Uint8Array) =>
  Object.fromEntries(decodeOnnxModelSummary(bytes).inputs.map((i) => [i.name, i.dims]));

describe('wan21-mini card ONNX artifacts', () => {
  it("give the DiT its eager RoPE inputs and a captured graph fixed to the forward's dims", () => {
    const dit = specOf('dit');
    const onnx = dit.onnx!;
    const inputDims = dit.forwardInputDims(2, { frames: 2, height: 8, width: 12 });
    expect(inputDims).toEqual({ latent: [2, 4, 2, 8, 12], timestep: [2], context: [2, 16, 64] });
    const extra = onnx.eagerInputs(inputDims);
    expect(Object.keys(extra)).toEqual(['rope_cos', 'rope_sin']);
    expect(extra['rope_cos']?.dims).toEqual([2 * 4 * 6, 16]);
    const eager = decodeOnnxModelSummary(onnx.buildOnnx({ form: 'eager' }));
    expect(eager.outputs[0]?.name).toBe('velocity');
    expect(eager.inputs.find((i) => i.name === 'latent')?.dims).toEqual([
      'batch',
      4,
      'frames',
      'height',
      'width',
    ]);
    const captured = onnx.buildOnnx({
      form: 'captured',
      weights: dit.initWeights(1),
      inputDims,
    });
    expect(inputDimsOf(captured)).toEqual(inputDims);
  });

  it('give the text encoder no eager extras and a captured graph of the batch', () => {
    const te = specOf('text_encoder');
    const onnx = te.onnx!;
    const inputDims = te.forwardInputDims(3, wan21MiniCard.latent);
    expect(inputDims).toEqual({ tokens: [3, 16] });
    expect(te.latentSized).toBe(false);
    expect(onnx.eagerInputs(inputDims)).toEqual({});
    expect(decodeOnnxModelSummary(onnx.buildOnnx({ form: 'eager' })).outputs[0]?.name).toBe(
      'context',
    );
    const captured = onnx.buildOnnx({ form: 'captured', weights: te.initWeights(1), inputDims });
    expect(inputDimsOf(captured)).toEqual(inputDims);
  });

  it('refuse a captured request without the input that fixes the dims (MODEL_INPUT_INVALID)', () => {
    const dit = specOf('dit');
    expect(() =>
      dit.onnx!.buildOnnx({ form: 'captured', weights: dit.initWeights(1), inputDims: {} }),
    ).toThrow(expect.objectContaining({ code: 'MODEL_INPUT_INVALID' }));
  });
});
