import { describe, expect, it } from 'vitest';
import { isFlowfleetError } from '@flowfleet/errors';
import { decodeOnnxModelSummary } from '@flowfleet/formats';
import { WAN21_VAE, WAN21_VAE_MINI } from './vae-config.js';
import { buildVaeDecoderOnnx } from './vae-graph.js';
import { vaeCacheSlots, vaeParameterShapes } from './vae-plan.js';
import { initVaeDecoderWeights } from './vae-weights.js';

/** Standard ai.onnx ops (opset 17) the step graph may use; nothing from a contrib domain. */
const ALLOWED_OPS = new Set([
  'Add',
  'Clip',
  'Concat',
  'Constant',
  'Conv',
  'Div',
  'Equal',
  'Identity',
  'MatMul',
  'Max',
  'Mul',
  'ReduceL2',
  'Reshape',
  'Resize',
  'Shape',
  'Sigmoid',
  'Slice',
  'Softmax',
  'Split',
  'Transpose',
  'Unsqueeze',
  'Where',
]);

describe('buildVaeDecoderOnnx', () => {
  it('eager: opset 17, standard ops only, latent + frame_index + caches + every weight in, frames + caches out', () => {
    const model = decodeOnnxModelSummary(buildVaeDecoderOnnx(WAN21_VAE_MINI, { form: 'eager' }));
    expect(model.opsetImports).toEqual([{ domain: '', version: 17 }]);
    expect(model.initializers).toEqual([]);
    expect(model.nodes.filter((n) => !ALLOWED_OPS.has(n.opType)).map((n) => n.opType)).toEqual([]);
    const slots = vaeCacheSlots(WAN21_VAE_MINI);
    expect(model.inputs.map((i) => i.name)).toEqual([
      'latent',
      'frame_index',
      ...slots.map((s) => `cache.${s.name}`),
      ...vaeParameterShapes(WAN21_VAE_MINI).keys(),
    ]);
    expect(model.inputs[0]).toEqual({
      name: 'latent',
      elemType: 'float',
      dims: ['batch', 4, 1, 'height', 'width'],
    });
    expect(model.inputs[1]).toEqual({ name: 'frame_index', elemType: 'int64', dims: [1] });
    expect(model.inputs.find((i) => i.name === 'cache.decoder.head.2')?.dims).toEqual([
      'batch',
      8,
      2,
      'height_x8',
      'width_x8',
    ]);
    expect(model.outputs.map((o) => o.name)).toEqual([
      'frames',
      ...slots.map((s) => `cache_out.${s.name}`),
    ]);
    expect(model.outputs[0]?.dims).toEqual(['batch', 3, 'frames', 'height_x8', 'width_x8']);
    expect(model.metadata).toMatchObject({
      'flowfleet.component': 'vae_decoder',
      'flowfleet.form': 'eager',
    });
  });

  it('the published decoder: 32 caches and 108 weight inputs, built without weights', () => {
    const model = decodeOnnxModelSummary(buildVaeDecoderOnnx(WAN21_VAE, { form: 'eager' }));
    expect(model.inputs).toHaveLength(2 + 32 + 108);
    expect(model.outputs).toHaveLength(1 + 32);
  });

  it('captured: weights baked in, batch and latent size fixed', () => {
    const weights = initVaeDecoderWeights(WAN21_VAE_MINI, 1);
    const bytes = buildVaeDecoderOnnx(WAN21_VAE_MINI, {
      form: 'captured',
      weights,
      batch: 2,
      height: 3,
      width: 5,
    });
    const model = decodeOnnxModelSummary(bytes);
    expect(model.initializers.map((i) => i.name)).toEqual([...weights.keys()]);
    expect(model.inputs).toHaveLength(2 + vaeCacheSlots(WAN21_VAE_MINI).length);
    expect(model.inputs[0]?.dims).toEqual([2, 4, 1, 3, 5]);
    expect(model.outputs[0]?.dims).toEqual([2, 3, 'frames', 24, 40]);
  });

  it('refuses captured weights that do not fit and non-positive dims', () => {
    const weights = initVaeDecoderWeights(WAN21_VAE_MINI, 1);
    weights.delete('decoder.head.2.bias');
    const codeOf = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return isFlowfleetError(error) ? error.code : 'not-flowfleet';
      }
      return undefined;
    };
    expect(
      codeOf(() =>
        buildVaeDecoderOnnx(WAN21_VAE_MINI, {
          form: 'captured',
          weights,
          batch: 1,
          height: 2,
          width: 2,
        }),
      ),
    ).toBe('MODEL_WEIGHTS_MISMATCH');
    const full = initVaeDecoderWeights(WAN21_VAE_MINI, 1);
    expect(
      codeOf(() =>
        buildVaeDecoderOnnx(WAN21_VAE_MINI, {
          form: 'captured',
          weights: full,
          batch: 0,
          height: 2,
          width: 2,
        }),
      ),
    ).toBe('MODEL_ONNX_OPTIONS_INVALID');
  });
});
