import type { Wan21Config } from './wan21-config.js';
import { patchValues } from './wan21-config.js';

/** Prefix of every text-encoder weight name. */
export const TEXT_ENCODER_PREFIX = 'text_encoder.';

function linear(shapes: Map<string, number[]>, name: string, inDim: number, outDim: number): void {
  shapes.set(`${name}.weight`, [outDim, inDim]);
  shapes.set(`${name}.bias`, [outDim]);
}

/**
 * Every DiT parameter name with its shape, in the Wan2.1 state_dict vocabulary (insertion order is
 * the spec's order; use `[...map.keys()].sort()` for a canonical order).
 */
export function parameterShapes(config: Wan21Config): Map<string, number[]> {
  const { dim: D, inChannels: C, textDim, freqDim, ffnDim } = config;
  const [pt, ph, pw] = config.patch;
  const shapes = new Map<string, number[]>();
  shapes.set('patch_embedding.weight', [D, C, pt, ph, pw]);
  shapes.set('patch_embedding.bias', [D]);
  linear(shapes, 'text_embedding.0', textDim, D);
  linear(shapes, 'text_embedding.2', D, D);
  linear(shapes, 'time_embedding.0', freqDim, D);
  linear(shapes, 'time_embedding.2', D, D);
  linear(shapes, 'time_projection.1', D, 6 * D);
  for (let i = 0; i < config.layers; i++) {
    const p = `blocks.${i}.`;
    for (const attn of ['self_attn', 'cross_attn']) {
      for (const proj of ['q', 'k', 'v', 'o']) linear(shapes, `${p}${attn}.${proj}`, D, D);
      shapes.set(`${p}${attn}.norm_q.weight`, [D]);
      shapes.set(`${p}${attn}.norm_k.weight`, [D]);
    }
    shapes.set(`${p}norm3.weight`, [D]);
    shapes.set(`${p}norm3.bias`, [D]);
    linear(shapes, `${p}ffn.0`, D, ffnDim);
    linear(shapes, `${p}ffn.2`, ffnDim, D);
    shapes.set(`${p}modulation`, [1, 6, D]);
  }
  linear(shapes, 'head.head', D, patchValues(config));
  shapes.set('head.modulation', [1, 2, D]);
  return shapes;
}

/** Every text-encoder parameter name (prefixed `text_encoder.`) with its shape. */
export function textEncoderParameterShapes(config: Wan21Config): Map<string, number[]> {
  const p = TEXT_ENCODER_PREFIX;
  const shapes = new Map<string, number[]>();
  shapes.set(`${p}token_embedding.weight`, [config.textVocab, config.textDim]);
  shapes.set(`${p}pos_embedding`, [config.textLen, config.textDim]);
  linear(shapes, `${p}mlp.0`, config.textDim, config.textHidden);
  linear(shapes, `${p}mlp.2`, config.textHidden, config.textDim);
  return shapes;
}

/** Elements of a tensor with these dims. */
export function shapeSize(dims: readonly number[]): number {
  let n = 1;
  for (const d of dims) n *= d;
  return n;
}

/** Total parameter count of the DiT (`component: 'text_encoder'` for the text encoder). */
export function parameterCount(
  config: Wan21Config,
  component: 'dit' | 'text_encoder' = 'dit',
): number {
  const shapes = component === 'dit' ? parameterShapes(config) : textEncoderParameterShapes(config);
  let total = 0;
  for (const dims of shapes.values()) total += shapeSize(dims);
  return total;
}
