import { FlowfleetError } from '@flowfleet/errors';
import type { TensorData } from '@flowfleet/platform';
import type { Wan21Config } from '../wan21-config.js';
import { resolveTextEncoderWeights } from './dit-weights.js';
import { geluInPlace, linear, modulatedLayerNorm } from './ops.js';

/** Token ids [B, L] as int32, or int64 (BigInt64Array) as the ONNX contract allows. */
export type TokenIds = Int32Array | BigInt64Array | readonly number[];

/**
 * The toy text encoder: h = token_embedding[tokens] + pos_embedding; context = h +
 * mlp.2(GELU(mlp.0(LN(h)))) → [B, L, textDim] float32. L must equal `config.textLen`.
 * @throws MODEL_INPUT_INVALID for a bad token count or an id outside the vocabulary;
 *   MODEL_WEIGHTS_MISMATCH for a bad weight set.
 */
export function textEncoderForward(
  tensors: ReadonlyMap<string, TensorData>,
  tokens: TokenIds,
  config: Wan21Config,
): Float32Array {
  const L = config.textLen;
  const E = config.textDim;
  if (tokens.length === 0 || tokens.length % L !== 0) {
    throw new FlowfleetError('MODEL_INPUT_INVALID', `tokens must be [B, ${L}]`, {
      details: { input: 'tokens', length: tokens.length, textLen: L },
    });
  }
  const w = resolveTextEncoderWeights(tensors, config);
  const rows = tokens.length;
  const h = new Float32Array(rows * E);
  for (let r = 0; r < rows; r++) {
    const id = Number(tokens[r]!);
    if (!Number.isInteger(id) || id < 0 || id >= config.textVocab) {
      throw new FlowfleetError('MODEL_INPUT_INVALID', `token id ${id} is outside the vocabulary`, {
        details: { input: 'tokens', index: r, id, textVocab: config.textVocab },
      });
    }
    const pos = (r % L) * E;
    for (let i = 0; i < E; i++) {
      h[r * E + i] = w.tokenEmbedding[id * E + i]! + w.posEmbedding[pos + i]!;
    }
  }
  const normed = new Float32Array(rows * E);
  modulatedLayerNorm(normed, h, rows, E, config.eps);
  const hidden = new Float32Array(rows * config.textHidden);
  linear(hidden, normed, rows, E, w.mlp0.weight, w.mlp0.bias, config.textHidden);
  geluInPlace(hidden);
  const context = normed; // LN output is no longer needed: reuse its buffer for mlp.2.
  linear(context, hidden, rows, config.textHidden, w.mlp2.weight, w.mlp2.bias, E);
  for (let i = 0; i < rows * E; i++) context[i] = h[i]! + context[i]!;
  return context;
}
