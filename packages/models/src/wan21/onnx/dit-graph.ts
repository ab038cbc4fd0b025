import { FlowfleetError } from '@flowfleet/errors';
import { encodeOnnxModel, type OnnxDim } from '@flowfleet/formats';
import { parameterShapes } from '../parameter-shapes.js';
import { ropeTables } from '../rope-tables.js';
import { headDim, validateWan21Config, type Wan21Config } from '../wan21-config.js';
import { checkWeightsAgainstConfig } from '../../weights/check-weights.js';
import { bindParams } from '../../onnx/bind-params.js';
import {
  ditBlock,
  ditHead,
  patchify,
  textEmbedding,
  timeEmbedding,
  unpatchify,
} from './dit-parts.js';
import { GraphBuilder, type Value } from '../../onnx/graph-builder.js';
import { checkCapturedSize, checkForm } from '../../onnx/onnx-form.js';
import {
  checkPatchMultiple,
  requireDim,
  type CapturedDims,
  type OnnxBuildOptions,
} from './onnx-options.js';

/** Version stamped into producer_version and metadata; bump when the graph changes. */
export const ONNX_GRAPH_VERSION = '1';

/** Symbolic dim names of the eager form. */
export const SYMBOLIC_DIMS = {
  batch: 'batch',
  frames: 'frames',
  height: 'height',
  width: 'width',
  tokens: 'tokens',
} as const;

function capturedDims(config: Wan21Config, options: OnnxBuildOptions): CapturedDims {
  const dims: CapturedDims = {
    batch: requireDim(options, 'batch'),
    frames: requireDim(options, 'frames'),
    height: requireDim(options, 'height'),
    width: requireDim(options, 'width'),
  };
  checkPatchMultiple(dims, config.patch);
  return dims;
}

/**
 * Builds the wan21 DiT as ONNX ModelProto bytes (opset 17), computing /tmp/wan21-spec.md's `dit`.
 *
 * Inputs: `latent` float32 [B, C, F, H, W], `timestep` float32 [B] (t = 1000·σ), `context`
 * float32 [B, L, textDim]; eager form also `rope_cos`, `rope_sin` float32 [N, d/2] and every
 * weight under its state_dict name. Output: `velocity` float32 [B, C, F, H, W].
 *
 * @throws MODEL_ONNX_OPTIONS_INVALID for an unknown form, or missing/invalid captured dims or weights.
 * @throws MODEL_WEIGHTS_MISMATCH when captured weights do not match the config.
 * @throws MODEL_CONFIG_INVALID when the config breaks a structural constraint.
 */
export function buildDitOnnx(config: Wan21Config, options: OnnxBuildOptions): Uint8Array {
  validateWan21Config(config);
  checkForm(options.form);
  const shapes = parameterShapes(config);
  const captured = options.form === 'captured' ? capturedDims(config, options) : undefined;
  if (captured !== undefined) {
    checkCapturedSize(shapes);
    if (options.weights === undefined) {
      throw new FlowfleetError('MODEL_ONNX_OPTIONS_INVALID', 'the captured form needs weights', {
        details: { field: 'weights' },
      });
    }
    checkWeightsAgainstConfig(options.weights, shapes);
  }
  const [pt, ph, pw] = config.patch;
  const half = headDim(config) / 2;
  const B: OnnxDim = captured?.batch ?? SYMBOLIC_DIMS.batch;
  const F: OnnxDim = captured?.frames ?? SYMBOLIC_DIMS.frames;
  const H: OnnxDim = captured?.height ?? SYMBOLIC_DIMS.height;
  const W: OnnxDim = captured?.width ?? SYMBOLIC_DIMS.width;
  const latentDims = [B, config.inChannels, F, H, W];

  const g = new GraphBuilder(`${config.name}.dit`);
  const latent = g.input('latent', 'float', latentDims);
  const timestep = g.input('timestep', 'float', [B]);
  const context = g.input('context', 'float', [B, config.textLen, config.textDim]);
  let ropeCos: Value;
  let ropeSin: Value;
  if (captured === undefined) {
    ropeCos = g.input('rope_cos', 'float', [SYMBOLIC_DIMS.tokens, half]);
    ropeSin = g.input('rope_sin', 'float', [SYMBOLIC_DIMS.tokens, half]);
  } else {
    const grid = { f: captured.frames / pt, h: captured.height / ph, w: captured.width / pw };
    const tables = ropeTables(config, grid);
    const ropeDims = [grid.f * grid.h * grid.w, half];
    ropeCos = g.initializer({
      name: 'rope_cos',
      elemType: 'float',
      dims: ropeDims,
      data: tables.cos,
    });
    ropeSin = g.initializer({
      name: 'rope_sin',
      elemType: 'float',
      dims: ropeDims,
      data: tables.sin,
    });
  }
  const p = bindParams(g, shapes, options.form, options.weights);

  let x = g.scope('patch_embedding', () => patchify(g, p, latent, config));
  const { e, e0 } = g.scope('time_embedding', () => timeEmbedding(g, p, timestep, config));
  const ctx = g.scope('text_embedding', () => textEmbedding(g, p, context));
  for (let i = 0; i < config.layers; i++) {
    x = ditBlock(g, p, x, i, { e0, ctx, ropeCos, ropeSin }, config);
  }
  const out = g.scope('head', () => ditHead(g, p, x, e, config));
  const velocity = g.scope('unpatchify', () => unpatchify(g, out, latent, config));
  g.output(velocity, 'velocity', 'float', latentDims);
  return encodeOnnxModel(
    g.toModel(ONNX_GRAPH_VERSION, {
      'flowfleet.model': config.name,
      'flowfleet.component': 'dit',
      'flowfleet.form': options.form,
    }),
  );
}
