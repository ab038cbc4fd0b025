import { FlowfleetError } from '@flowfleet/errors';
import type { TensorData } from '@flowfleet/platform';
import type { Wan21Config } from '../wan21-config.js';
import { headDim, patchValues } from '../wan21-config.js';
import { applyRope, attention } from './attention.js';
import type { AttentionWeights, DitWeights } from './dit-weights.js';
import { resolveDitWeights } from './dit-weights.js';
import { DitWorkspace, ditWorkspaceShape } from './dit-workspace.js';
import {
  affineLayerNorm,
  geluInPlace,
  linear,
  modulatedLayerNorm,
  residualAdd,
  rmsNormInPlace,
  silu,
} from './ops.js';
import { patchify, unpatchify } from './patchify.js';
import type { LatentDims } from './patchify.js';

/** Inputs of one DiT forward (the ONNX contract's `latent`, `timestep`, `context`). */
export interface DitForwardInputs {
  /** [B, C, F, H, W] row-major. */
  readonly latent: Float32Array;
  readonly dims: LatentDims;
  /** [B]; t = 1000·σ. */
  readonly timestep: ArrayLike<number>;
  /** [B, L, textDim] row-major; L = context.length / (B·textDim). */
  readonly context: Float32Array;
}

function inputError(message: string, details: Record<string, unknown>): FlowfleetError {
  return new FlowfleetError('MODEL_INPUT_INVALID', message, { details });
}

/** Checks dims against the config and returns the context length L. */
function validateInputs(config: Wan21Config, inputs: DitForwardInputs): number {
  const { dims, latent, timestep, context } = inputs;
  const [B, C, F, H, W] = dims;
  const [pt, ph, pw] = config.patch;
  if (dims.length !== 5 || !dims.every((d) => Number.isInteger(d) && d > 0)) {
    throw inputError('latent dims must be five positive integers', { input: 'latent', dims });
  }
  if (C !== config.inChannels || F % pt !== 0 || H % ph !== 0 || W % pw !== 0) {
    throw inputError('latent dims do not fit the config (channels, patch divisibility)', {
      input: 'latent',
      dims,
      inChannels: config.inChannels,
      patch: config.patch,
    });
  }
  if (latent.length !== B * C * F * H * W) {
    throw inputError('latent length does not match its dims', { input: 'latent', dims });
  }
  if (timestep.length !== B) {
    throw inputError('timestep must have one value per sample', { input: 'timestep', batch: B });
  }
  const perSample = config.textDim * B;
  const contextLen = context.length / perSample;
  if (!Number.isInteger(contextLen) || contextLen < 1) {
    throw inputError('context must be [B, L, textDim] with L ≥ 1', {
      input: 'context',
      length: context.length,
      textDim: config.textDim,
    });
  }
  return contextLen;
}

/** Sinusoidal timestep embedding [cos(t·ω), sin(t·ω)], t·ω in float64, for each sample. */
export function timestepSinusoid(
  out: Float32Array,
  timestep: ArrayLike<number>,
  freqDim: number,
): void {
  const half = freqDim / 2;
  for (let b = 0; b < timestep.length; b++) {
    const t = timestep[b]!;
    for (let k = 0; k < half; k++) {
      const angle = t * Math.pow(10000, -k / half);
      out[b * freqDim + k] = Math.cos(angle);
      out[b * freqDim + half + k] = Math.sin(angle);
    }
  }
}

function conditioning(
  w: DitWeights,
  config: Wan21Config,
  ws: DitWorkspace,
  inputs: DitForwardInputs,
): void {
  const B = ws.shape.batch;
  const D = config.dim;
  timestepSinusoid(ws.sinusoid, inputs.timestep, config.freqDim);
  const te0 = w.timeEmbedding0;
  linear(ws.timeHidden, ws.sinusoid, B, config.freqDim, te0.weight, te0.bias, D);
  silu(ws.timeHidden, ws.timeHidden);
  linear(ws.timeEmbedding, ws.timeHidden, B, D, w.timeEmbedding2.weight, w.timeEmbedding2.bias, D);
  silu(ws.timeSilu, ws.timeEmbedding);
  const tp = w.timeProjection;
  linear(ws.timeProjection, ws.timeSilu, B, D, tp.weight, tp.bias, 6 * D);
  const ctxRows = B * ws.shape.contextLen;
  const t0 = w.textEmbedding0;
  linear(ws.ctxHidden, inputs.context, ctxRows, config.textDim, t0.weight, t0.bias, D);
  geluInPlace(ws.ctxHidden);
  linear(ws.ctx, ws.ctxHidden, ctxRows, D, w.textEmbedding2.weight, w.textEmbedding2.bias, D);
}

function attentionModule(
  a: AttentionWeights,
  config: Wan21Config,
  ws: DitWorkspace,
  kvSource: Float32Array,
  kvRows: number,
  rope: boolean,
): void {
  const B = ws.shape.batch;
  const D = config.dim;
  const rows = B * ws.tokens;
  const k = rope ? ws.k : ws.ctxK;
  const v = rope ? ws.v : ws.ctxV;
  linear(ws.q, ws.y, rows, D, a.q.weight, a.q.bias, D);
  linear(k, kvSource, kvRows, D, a.k.weight, a.k.bias, D);
  linear(v, kvSource, kvRows, D, a.v.weight, a.v.bias, D);
  rmsNormInPlace(ws.q, rows, D, config.eps, a.normQ);
  rmsNormInPlace(k, kvRows, D, config.eps, a.normK);
  const d = headDim(config);
  if (rope) {
    applyRope(ws.q, B, ws.tokens, config.heads, d, ws.ropeCos, ws.ropeSin);
    applyRope(k, B, ws.tokens, config.heads, d, ws.ropeCos, ws.ropeSin);
  }
  const dims = { batch: B, queries: ws.tokens, keys: kvRows / B, heads: config.heads, headDim: d };
  attention(ws.attn, ws.q, k, v, dims, ws.scratch);
  linear(ws.y, ws.attn, rows, D, a.o.weight, a.o.bias, D);
}

/** A holder for the workspace of the last forward, so repeated calls reuse its buffers. */
export interface DitWorkspaceSlot {
  workspace?: DitWorkspace;
}

/**
 * The wan21 DiT velocity for a batch (README "Architecture"), float32 storage with float64
 * accumulation. Pass a `slot` to reuse buffers across calls of the same sizes (the forward then
 * allocates only its output).
 * @throws MODEL_WEIGHTS_MISMATCH for a bad weight set; MODEL_INPUT_INVALID for bad input dims.
 */
export function ditForward(
  tensors: ReadonlyMap<string, TensorData>,
  config: Wan21Config,
  inputs: DitForwardInputs,
  slot: DitWorkspaceSlot = {},
): Float32Array {
  const contextLen = validateInputs(config, inputs);
  const w = resolveDitWeights(tensors, config);
  const [B] = inputs.dims;
  const [pt, ph, pw] = config.patch;
  const shape = ditWorkspaceShape(config, inputs.dims, contextLen);
  if (slot.workspace === undefined || !slot.workspace.fits(shape)) {
    slot.workspace = new DitWorkspace(config, shape);
  }
  const ws = slot.workspace;
  const D = config.dim;
  const N = ws.tokens;
  const rows = B * N;
  const kp = config.inChannels * pt * ph * pw;

  patchify(inputs.latent, inputs.dims, config.patch, 'channel-first', ws.patches);
  const pe = w.patchEmbedding;
  linear(ws.x, ws.patches, rows, kp, pe.weight, pe.bias, D);
  conditioning(w, config, ws, inputs);

  const stride = 6 * D;
  const table = ws.modulation;
  const mod = (shiftOffset: number, scaleOffset: number) =>
    ({ table, stride, rowsPerSample: N, shiftOffset, scaleOffset }) as const;
  const gate = (gateOffset: number) => ({ table, stride, rowsPerSample: N, gateOffset }) as const;
  for (const block of w.blocks) {
    for (let b = 0; b < B; b++) {
      for (let i = 0; i < stride; i++) {
        table[b * stride + i] = block.modulation[i]! + ws.timeProjection[b * stride + i]!;
      }
    }
    modulatedLayerNorm(ws.y, ws.x, rows, D, config.eps, mod(0, D));
    attentionModule(block.selfAttn, config, ws, ws.y, rows, true);
    residualAdd(ws.x, ws.y, rows, D, gate(2 * D));

    affineLayerNorm(ws.y, ws.x, rows, D, config.eps, block.norm3.weight, block.norm3.bias);
    attentionModule(block.crossAttn, config, ws, ws.ctx, B * contextLen, false);
    residualAdd(ws.x, ws.y, rows, D);

    modulatedLayerNorm(ws.y, ws.x, rows, D, config.eps, mod(3 * D, 4 * D));
    linear(ws.hidden, ws.y, rows, D, block.ffn0.weight, block.ffn0.bias, config.ffnDim);
    geluInPlace(ws.hidden);
    linear(ws.y, ws.hidden, rows, config.ffnDim, block.ffn2.weight, block.ffn2.bias, D);
    residualAdd(ws.x, ws.y, rows, D, gate(5 * D));
  }

  // Head: the shift/scale table is head.modulation + e (the pre-SiLU time embedding).
  for (let b = 0; b < B; b++) {
    for (let i = 0; i < 2 * D; i++) {
      table[b * stride + i] = w.headModulation[i]! + ws.timeEmbedding[b * D + (i % D)]!;
    }
  }
  modulatedLayerNorm(ws.y, ws.x, rows, D, config.eps, mod(0, D));
  linear(ws.headOut, ws.y, rows, D, w.head.weight, w.head.bias, patchValues(config));
  return unpatchify(ws.headOut, inputs.dims, config.patch);
}
