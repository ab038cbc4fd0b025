import { FlowfleetError } from '@flowfleet/errors';
import type { InputDims, OnnxArtifacts, OnnxGraphRequest, TensorMap } from '@flowfleet/platform';
import type { Wan21Component } from '../init-weights.js';
import { ropeTables } from '../rope-tables.js';
import { headDim, type Wan21Config } from '../wan21-config.js';
import { buildDitOnnx } from './dit-graph.js';
import type { OnnxBuildOptions } from './onnx-options.js';
import { buildTextEncoderOnnx } from './text-encoder-graph.js';

function requireDims(inputDims: InputDims, name: string, rank: number): readonly number[] {
  const dims = inputDims[name];
  if (dims === undefined || dims.length !== rank) {
    throw new FlowfleetError('MODEL_INPUT_INVALID', `input ${name} needs ${rank} dims`, {
      details: { input: name, dims, present: Object.keys(inputDims) },
    });
  }
  return dims;
}

/**
 * The builder options of a request: eager as is; captured with the fixed dims read from the
 * forward's input dims (`tokens` [B, L] for the text encoder, `latent` [B, C, F, H, W] for the DiT).
 * @throws MODEL_INPUT_INVALID when the input that fixes the dims is missing or of another rank
 */
function buildOptions(component: Wan21Component, request: OnnxGraphRequest): OnnxBuildOptions {
  if (request.form !== 'captured') return { form: request.form };
  const { weights, inputDims } = request;
  if (component === 'text_encoder') {
    return { form: 'captured', weights, batch: requireDims(inputDims, 'tokens', 2)[0] ?? 0 };
  }
  const [batch = 0, , frames = 0, height = 0, width = 0] = requireDims(inputDims, 'latent', 5);
  return { form: 'captured', weights, batch, frames, height, width };
}

/**
 * The ONNX artifacts of one wan21 component for `config`: the graph builders, and for the DiT
 * the RoPE tables its eager graph takes as inputs (a captured graph bakes them in).
 */
export function createOnnxArtifacts(config: Wan21Config, component: Wan21Component): OnnxArtifacts {
  if (component === 'text_encoder') {
    return Object.freeze({
      buildOnnx: (request: OnnxGraphRequest) =>
        buildTextEncoderOnnx(config, buildOptions(component, request)),
      eagerInputs: () => ({}),
    });
  }
  const [pt, ph, pw] = config.patch;
  return Object.freeze({
    buildOnnx: (request: OnnxGraphRequest) =>
      buildDitOnnx(config, buildOptions(component, request)),
    eagerInputs: (inputDims: InputDims): TensorMap => {
      const [, , F = 0, H = 0, W = 0] = requireDims(inputDims, 'latent', 5);
      const grid = { f: F / pt, h: H / ph, w: W / pw };
      if (![grid.f, grid.h, grid.w].every((n) => Number.isInteger(n) && n > 0)) {
        throw new FlowfleetError(
          'MODEL_INPUT_INVALID',
          'latent grid is not a multiple of the patch',
          { details: { input: 'latent', dims: [F, H, W], patch: config.patch } },
        );
      }
      const tables = ropeTables(config, grid);
      const dims = [grid.f * grid.h * grid.w, headDim(config) / 2];
      return {
        rope_cos: { dtype: 'float32', dims, data: tables.cos },
        rope_sin: { dtype: 'float32', dims, data: tables.sin },
      };
    },
  });
}
