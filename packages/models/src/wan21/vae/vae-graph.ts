import { FlowfleetError } from '@flowfleet/errors';
import { encodeOnnxModel, type OnnxDim } from '@flowfleet/formats';
import type { TensorData } from '@flowfleet/platform';
import { checkWeightsAgainstConfig } from '../../weights/check-weights.js';
import { bindParams } from '../../onnx/bind-params.js';
import { GraphBuilder, type Value } from '../../onnx/graph-builder.js';
import {
  attentionBlock,
  causalConv,
  clip,
  pointwiseConv,
  residualBlock,
  resample,
  rmsNorm,
  silu,
  type StepContext,
} from './vae-graph-parts.js';
import {
  validateWanVaeConfig,
  vaeDecoderDims,
  vaeSpatialFactor,
  type WanVaeConfig,
} from './vae-config.js';
import { vaeCacheSlots, vaeDecoderLayers, vaeParameterShapes } from './vae-plan.js';

/** Version stamped into producer_version and metadata; bump when the graph changes. */
export const VAE_GRAPH_VERSION = '1';

/** Graph input and output names of the decode step. */
export const VAE_IO = Object.freeze({
  latent: 'latent',
  frameIndex: 'frame_index',
  frames: 'frames',
  cacheIn: (slot: string) => `cache.${slot}`,
  cacheOut: (slot: string) => `cache_out.${slot}`,
});

/** How the step graph is specialised (the DiT's forms: weights as inputs, or baked with fixed dims). */
export type VaeOnnxOptions =
  | { readonly form: 'eager' }
  | {
      readonly form: 'captured';
      readonly weights: ReadonlyMap<string, TensorData>;
      readonly batch: number;
      /** Latent height and width. */
      readonly height: number;
      readonly width: number;
    };

function invalidOptions(message: string, details: Record<string, unknown>): FlowfleetError {
  return new FlowfleetError('MODEL_ONNX_OPTIONS_INVALID', message, { details });
}

function dimsFor(options: VaeOnnxOptions): {
  batch: OnnxDim;
  height(scale: number): OnnxDim;
  width(scale: number): OnnxDim;
} {
  if (options.form === 'eager') {
    const named = (axis: string) => (scale: number) => (scale === 1 ? axis : `${axis}_x${scale}`);
    return { batch: 'batch', height: named('height'), width: named('width') };
  }
  for (const field of ['batch', 'height', 'width'] as const) {
    const value = options[field];
    if (!Number.isInteger(value) || value <= 0) {
      throw invalidOptions(`${field} must be a positive integer`, { field, value });
    }
  }
  return {
    batch: options.batch,
    height: (scale) => options.height * scale,
    width: (scale) => options.width * scale,
  };
}

/**
 * Builds one decode step of the Wan2.1 VAE decoder as ONNX ModelProto bytes (opset 17, no contrib
 * ops): latent frame i of the DiT's latent in, its frames and the causal caches out. A clip of T
 * latent frames is T steps (i = 0 … T − 1), each feeding back the previous step's caches; the
 * frames are those of the original's frame-by-frame decode (python/src/flowfleet/torch/vae.py).
 *
 * Inputs: `latent` float32 [B, z, 1, h, w] (normalised, as the DiT produces it), `frame_index`
 * int64 [1] (frame 0 ignores the caches and skips the temporal upsamplings' `time_conv`), and per
 * cache slot (`vaeCacheSlots`) `cache.<slot>` float32 [B, C, 2, h·s, w·s]; the eager form also
 * every weight under its Wan name. Outputs: `frames` float32 [B, 3, n, 8h, 8w] in [−1, 1] (n = 1
 * at frame 0, else 4) and `cache_out.<slot>` (the next step's `cache.<slot>`).
 *
 * @throws MODEL_CONFIG_INVALID for a config that breaks its structure.
 * @throws MODEL_ONNX_OPTIONS_INVALID for non-positive captured dims.
 * @throws MODEL_WEIGHTS_MISMATCH when captured weights do not fit the config.
 */
export function buildVaeDecoderOnnx(config: WanVaeConfig, options: VaeOnnxOptions): Uint8Array {
  validateWanVaeConfig(config);
  const shapes = vaeParameterShapes(config);
  const dims = dimsFor(options);
  if (options.form === 'captured') checkWeightsAgainstConfig(options.weights, shapes);
  const g = new GraphBuilder(`${config.name}.vae_decoder`);
  const latentDims = [dims.batch, config.zDim, 1, dims.height(1), dims.width(1)];
  const latent = g.input(VAE_IO.latent, 'float', latentDims);
  const frameIndex = g.input(VAE_IO.frameIndex, 'int64', [1]);
  const slots = vaeCacheSlots(config);
  const cacheInputs = new Map<string, Value>();
  for (const slot of slots) {
    const cacheDims = [
      dims.batch,
      slot.channels,
      2,
      dims.height(slot.scale),
      dims.width(slot.scale),
    ];
    cacheInputs.set(slot.name, g.input(VAE_IO.cacheIn(slot.name), 'float', cacheDims));
  }
  const p = bindParams(
    g,
    shapes,
    options.form,
    options.form === 'captured' ? options.weights : undefined,
  );
  const next = new Map<string, Value>();
  const ctx: StepContext = {
    first: g.node('Equal', [frameIndex, g.constInt64([0])]),
    cache: (slot) => {
      const value = cacheInputs.get(slot);
      if (value === undefined) throw new Error(`graph code asked for unknown cache slot ${slot}`);
      return value;
    },
    setCache: (slot, value) => next.set(slot, value),
  };

  const mean = g.constFloat(config.latentsMean, [1, config.zDim, 1, 1, 1]);
  const std = g.constFloat(config.latentsStd, [1, config.zDim, 1, 1, 1]);
  let x = g.scope('conv2', () => pointwiseConv(g, p, g.add(g.mul(latent, std), mean), 'conv2'));
  x = g.scope('decoder.conv1', () => causalConv(g, p, ctx, x, 'decoder.conv1', [3, 3, 3]));
  for (const layer of vaeDecoderLayers(config)) {
    x = g.scope(layer.wan, () => {
      if (layer.kind === 'residual')
        return residualBlock(g, p, ctx, x, layer.wan, layer.cin, layer.cout);
      if (layer.kind === 'attention') return attentionBlock(g, p, x, layer.wan, layer.dim);
      return resample(g, p, ctx, x, layer.wan, layer.dim, layer.temporal);
    });
  }
  const decoderDims = vaeDecoderDims(config);
  const last = decoderDims[decoderDims.length - 1] ?? 0;
  const rgb = g.scope('decoder.head', () => {
    const h = silu(g, rmsNorm(g, p, x, 'decoder.head.0', last));
    return clip(g, causalConv(g, p, ctx, h, 'decoder.head.2', [3, 3, 3]), -1, 1);
  });

  const s = vaeSpatialFactor(config);
  g.output(rgb, VAE_IO.frames, 'float', [
    dims.batch,
    config.outChannels,
    'frames',
    dims.height(s),
    dims.width(s),
  ]);
  for (const slot of slots) {
    const value = next.get(slot.name);
    if (value === undefined) throw new Error(`the graph left cache slot ${slot.name} unset`);
    const cacheDims = [
      dims.batch,
      slot.channels,
      2,
      dims.height(slot.scale),
      dims.width(slot.scale),
    ];
    g.output(value, VAE_IO.cacheOut(slot.name), 'float', cacheDims);
  }
  return encodeOnnxModel(
    g.toModel(VAE_GRAPH_VERSION, {
      'flowfleet.model': config.name,
      'flowfleet.component': 'vae_decoder',
      'flowfleet.form': options.form,
    }),
  );
}
