import { FlowfleetError } from '@flowfleet/errors';
import { encodeOnnxModel, type OnnxDim } from '@flowfleet/formats';
import { TEXT_ENCODER_PREFIX, textEncoderParameterShapes } from '../parameter-shapes.js';
import { validateWan21Config, type Wan21Config } from '../wan21-config.js';
import { checkWeightsAgainstConfig } from '../../weights/check-weights.js';
import { bindParams } from '../../onnx/bind-params.js';
import { ONNX_GRAPH_VERSION, SYMBOLIC_DIMS } from './dit-graph.js';
import { GraphBuilder } from '../../onnx/graph-builder.js';
import { geluTanh, layerNormNoAffine, linear } from '../../onnx/layers.js';
import { checkCapturedSize, checkForm } from '../../onnx/onnx-form.js';
import { requireDim, type OnnxBuildOptions } from './onnx-options.js';

/**
 * Builds the toy text encoder as ONNX ModelProto bytes (opset 17):
 * h = token_embedding[tokens] + pos_embedding; context = h + mlp(LayerNorm(h)).
 *
 * Input `tokens` int64 [B, L] (byte ids, 256 = pad); output `context` float32 [B, L, textDim].
 * Eager form: weights are inputs named `text_encoder.*`, B symbolic; captured: baked, B fixed.
 *
 * @throws MODEL_ONNX_OPTIONS_INVALID for an unknown form, or a missing batch/weights when captured.
 * @throws MODEL_WEIGHTS_MISMATCH when captured weights do not match the config.
 * @throws MODEL_CONFIG_INVALID when the config breaks a structural constraint.
 */
export function buildTextEncoderOnnx(config: Wan21Config, options: OnnxBuildOptions): Uint8Array {
  validateWan21Config(config);
  checkForm(options.form);
  const shapes = textEncoderParameterShapes(config);
  let B: OnnxDim = SYMBOLIC_DIMS.batch;
  if (options.form === 'captured') {
    B = requireDim(options, 'batch');
    checkCapturedSize(shapes);
    if (options.weights === undefined) {
      throw new FlowfleetError('MODEL_ONNX_OPTIONS_INVALID', 'the captured form needs weights', {
        details: { field: 'weights' },
      });
    }
    checkWeightsAgainstConfig(options.weights, shapes);
  }
  const pre = TEXT_ENCODER_PREFIX;
  const g = new GraphBuilder(`${config.name}.text_encoder`);
  const tokens = g.input('tokens', 'int64', [B, config.textLen]);
  const p = bindParams(g, shapes, options.form, options.weights);

  const h = g.scope('embed', () =>
    g.add(g.gather(p(`${pre}token_embedding.weight`), tokens, 0), p(`${pre}pos_embedding`)),
  );
  const mlp = g.scope('mlp', () => {
    const normed = layerNormNoAffine(g, h, config.textDim, config.eps);
    return linear(g, p, geluTanh(g, linear(g, p, normed, `${pre}mlp.0`)), `${pre}mlp.2`);
  });
  g.output(g.add(h, mlp), 'context', 'float', [B, config.textLen, config.textDim]);
  return encodeOnnxModel(
    g.toModel(ONNX_GRAPH_VERSION, {
      'flowfleet.model': config.name,
      'flowfleet.component': 'text_encoder',
      'flowfleet.form': options.form,
    }),
  );
}
