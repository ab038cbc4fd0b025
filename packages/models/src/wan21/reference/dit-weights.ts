import type { TensorData } from '@flowfleet/platform';
import { checkWeightsAgainstConfig } from '../../weights/check-weights.js';
import { parameterShapes, textEncoderParameterShapes } from '../parameter-shapes.js';
import type { Wan21Config } from '../wan21-config.js';

/** One Linear layer: weight [out, in], bias [out]. */
export interface LinearWeights {
  readonly weight: Float32Array;
  readonly bias: Float32Array;
}

/** One attention module's projections and q/k RMSNorm weights. */
export interface AttentionWeights {
  readonly q: LinearWeights;
  readonly k: LinearWeights;
  readonly v: LinearWeights;
  readonly o: LinearWeights;
  readonly normQ: Float32Array;
  readonly normK: Float32Array;
}

/** One DiT block. */
export interface DitBlockWeights {
  readonly selfAttn: AttentionWeights;
  readonly crossAttn: AttentionWeights;
  readonly norm3: LinearWeights;
  readonly ffn0: LinearWeights;
  readonly ffn2: LinearWeights;
  /** [1, 6, D] flattened. */
  readonly modulation: Float32Array;
}

/** Every DiT tensor as a typed view, resolved once per forward. */
export interface DitWeights {
  readonly patchEmbedding: LinearWeights;
  readonly textEmbedding0: LinearWeights;
  readonly textEmbedding2: LinearWeights;
  readonly timeEmbedding0: LinearWeights;
  readonly timeEmbedding2: LinearWeights;
  readonly timeProjection: LinearWeights;
  readonly blocks: readonly DitBlockWeights[];
  readonly head: LinearWeights;
  /** [1, 2, D] flattened. */
  readonly headModulation: Float32Array;
}

/** The toy text encoder's tensors as typed views. */
export interface TextEncoderWeights {
  readonly tokenEmbedding: Float32Array;
  readonly posEmbedding: Float32Array;
  readonly mlp0: LinearWeights;
  readonly mlp2: LinearWeights;
}

type Lookup = (name: string) => Float32Array;

function lookupIn(tensors: ReadonlyMap<string, TensorData>): Lookup {
  // checkWeightsAgainstConfig has already proven presence, dtype float32 and dims.
  return (name) => tensors.get(name)!.data as Float32Array;
}

function linearOf(get: Lookup, name: string): LinearWeights {
  return { weight: get(`${name}.weight`), bias: get(`${name}.bias`) };
}

function attentionOf(get: Lookup, name: string): AttentionWeights {
  return {
    q: linearOf(get, `${name}.q`),
    k: linearOf(get, `${name}.k`),
    v: linearOf(get, `${name}.v`),
    o: linearOf(get, `${name}.o`),
    normQ: get(`${name}.norm_q.weight`),
    normK: get(`${name}.norm_k.weight`),
  };
}

/**
 * Validates a DiT weight set against the config and returns typed views of its tensors.
 * @throws MODEL_WEIGHTS_MISMATCH listing missing, unexpected and wrong-shape tensors.
 */
export function resolveDitWeights(
  tensors: ReadonlyMap<string, TensorData>,
  config: Wan21Config,
): DitWeights {
  checkWeightsAgainstConfig(tensors, parameterShapes(config));
  const get = lookupIn(tensors);
  const blocks: DitBlockWeights[] = [];
  for (let i = 0; i < config.layers; i++) {
    const p = `blocks.${i}`;
    blocks.push({
      selfAttn: attentionOf(get, `${p}.self_attn`),
      crossAttn: attentionOf(get, `${p}.cross_attn`),
      norm3: linearOf(get, `${p}.norm3`),
      ffn0: linearOf(get, `${p}.ffn.0`),
      ffn2: linearOf(get, `${p}.ffn.2`),
      modulation: get(`${p}.modulation`),
    });
  }
  return {
    patchEmbedding: linearOf(get, 'patch_embedding'),
    textEmbedding0: linearOf(get, 'text_embedding.0'),
    textEmbedding2: linearOf(get, 'text_embedding.2'),
    timeEmbedding0: linearOf(get, 'time_embedding.0'),
    timeEmbedding2: linearOf(get, 'time_embedding.2'),
    timeProjection: linearOf(get, 'time_projection.1'),
    blocks,
    head: linearOf(get, 'head.head'),
    headModulation: get('head.modulation'),
  };
}

/**
 * Validates a text-encoder weight set against the config and returns typed views.
 * @throws MODEL_WEIGHTS_MISMATCH listing missing, unexpected and wrong-shape tensors.
 */
export function resolveTextEncoderWeights(
  tensors: ReadonlyMap<string, TensorData>,
  config: Wan21Config,
): TextEncoderWeights {
  checkWeightsAgainstConfig(tensors, textEncoderParameterShapes(config));
  const get = lookupIn(tensors);
  return {
    tokenEmbedding: get('text_encoder.token_embedding.weight'),
    posEmbedding: get('text_encoder.pos_embedding'),
    mlp0: linearOf(get, 'text_encoder.mlp.0'),
    mlp2: linearOf(get, 'text_encoder.mlp.2'),
  };
}
