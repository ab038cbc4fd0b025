import { FlowfleetError } from '@flowfleet/errors';
import type { TensorData } from '@flowfleet/platform';
import { ropeTables } from '../rope-tables.js';
import { headDim, type Wan21Config } from '../wan21-config.js';
import { buildDitOnnx } from './dit-graph.js';
import type { OnnxBuildOptions } from './onnx-options.js';
import { buildTextEncoderOnnx } from './text-encoder-graph.js';

/** The weight-carrying components that have an ONNX graph. */
export type OnnxComponent = 'dit' | 'text_encoder';

/** Input dims by input name, as `ComponentForward.capture` receives them. */
export type OnnxInputDims = Readonly<Record<string, readonly number[]>>;

/** The fixed dims a captured graph is built for (frames/height/width only for the DiT). */
export type OnnxCapturedDims = {
  readonly batch: number;
  readonly frames?: number;
  readonly height?: number;
  readonly width?: number;
};

/**
 * What a card component carries in `artifacts` for ONNX backends (which may not import this
 * package): the builder plus the two pieces of model knowledge a backend needs to run it.
 */
export type OnnxArtifacts = {
  /** Builds the component's ONNX ModelProto bytes in the eager or captured form. */
  readonly buildOnnx: (options: OnnxBuildOptions) => Uint8Array;
  /** Inputs the eager graph needs besides the forward's own (dit: `rope_cos`, `rope_sin`). */
  readonly onnxEagerInputs: (inputDims: OnnxInputDims) => Record<string, TensorData>;
  /** The fixed dims of a captured graph for these input dims (spread into `buildOnnx` options). */
  readonly onnxCapturedDims: (inputDims: OnnxInputDims) => OnnxCapturedDims;
};

function requireDims(inputDims: OnnxInputDims, name: string, rank: number): readonly number[] {
  const dims = inputDims[name];
  if (dims === undefined || dims.length !== rank) {
    throw new FlowfleetError('MODEL_INPUT_INVALID', `input ${name} needs ${rank} dims`, {
      details: { input: name, dims, present: Object.keys(inputDims) },
    });
  }
  return dims;
}

/** The ONNX artifacts of one wan21 component for `config`. */
export function createOnnxArtifacts(config: Wan21Config, component: OnnxComponent): OnnxArtifacts {
  if (component === 'text_encoder') {
    return {
      buildOnnx: (options) => buildTextEncoderOnnx(config, options),
      onnxEagerInputs: () => ({}),
      onnxCapturedDims: (inputDims) => ({ batch: requireDims(inputDims, 'tokens', 2)[0] ?? 0 }),
    };
  }
  const [pt, ph, pw] = config.patch;
  return {
    buildOnnx: (options) => buildDitOnnx(config, options),
    onnxEagerInputs: (inputDims) => {
      const [, , F = 0, H = 0, W = 0] = requireDims(inputDims, 'latent', 5);
      const grid = { f: F / pt, h: H / ph, w: W / pw };
      if (![grid.f, grid.h, grid.w].every((n) => Number.isInteger(n) && n > 0)) {
        throw new FlowfleetError(
          'MODEL_INPUT_INVALID',
          'latent grid is not a multiple of the patch',
          {
            details: { input: 'latent', dims: [F, H, W], patch: config.patch },
          },
        );
      }
      const tables = ropeTables(config, grid);
      const dims = [grid.f * grid.h * grid.w, headDim(config) / 2];
      return {
        rope_cos: { dtype: 'float32', dims, data: tables.cos },
        rope_sin: { dtype: 'float32', dims, data: tables.sin },
      };
    },
    onnxCapturedDims: (inputDims) => {
      const [batch = 0, , frames = 0, height = 0, width = 0] = requireDims(inputDims, 'latent', 5);
      return { batch, frames, height, width };
    },
  };
}
