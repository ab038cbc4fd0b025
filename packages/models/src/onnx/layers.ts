import { floatAttr, type GraphBuilder, type Value } from './graph-builder.js';

/** Looks up a parameter (graph input or initializer) by its state_dict name. */
export type ParamLookup = (name: string) => Value;

/**
 * `Linear` in PyTorch layout: y = x·Wᵀ + b with `${prefix}.weight` [out, in], `${prefix}.bias`
 * [out], on x of any rank ≥ 2. Written as Reshape → Gemm(transB) → Reshape rather than MatMul + Add:
 * ORT's MatMulAddFusion turns a MatMul + Add into a Gemm only when the shapes are static, which
 * would round the captured graph differently from the eager one (DESIGN §8 requires them bit-identical).
 */
export function linear(g: GraphBuilder, p: ParamLookup, x: Value, prefix: string): Value {
  const weight = p(`${prefix}.weight`);
  const [outDim = -1, inDim = -1] = g.staticDims(weight);
  const rows = g.reshape(x, [-1, inDim]);
  const y = g.node('Gemm', [rows, weight, p(`${prefix}.bias`)], { transB: 1 });
  const lead = g.node('Shape', [x], { end: -1 });
  return g.reshape(y, g.concat([lead, g.constInt64([outDim])], 0));
}

/**
 * LayerNorm over the last axis (width `dim`) without affine, as LayerNormalization-17 with a
 * constant all-ones scale (multiplying by 1 is exact). Measured against a two-pass float64 LN it is
 * as accurate as the ReduceMean/Sub/Sqrt/Div decomposition and ~10 % faster on the mini DiT card.
 */
export function layerNormNoAffine(g: GraphBuilder, x: Value, dim: number, eps: number): Value {
  const ones = g.constFloat(new Array<number>(dim).fill(1), [dim]);
  return g.node('LayerNormalization', [x, ones], { axis: -1, epsilon: floatAttr(eps) });
}

/** LayerNorm over the last axis with `${prefix}.weight` and `${prefix}.bias`. */
export function layerNormAffine(
  g: GraphBuilder,
  p: ParamLookup,
  x: Value,
  prefix: string,
  eps: number,
): Value {
  const inputs = [x, p(`${prefix}.weight`), p(`${prefix}.bias`)];
  return g.node('LayerNormalization', inputs, { axis: -1, epsilon: floatAttr(eps) });
}

/** RMSNorm over the last axis times a learned weight: x / sqrt(mean(x²) + eps) · w. */
export function rmsNorm(g: GraphBuilder, x: Value, weight: Value, eps: number): Value {
  const meanSquare = g.reduceMean(g.mul(x, x), [-1]);
  return g.mul(g.div(x, g.sqrt(g.add(meanSquare, g.constFloat(eps)))), weight);
}

/** GELU, tanh approximation: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). */
export function geluTanh(g: GraphBuilder, x: Value): Value {
  const cube = g.mul(g.mul(x, x), x);
  const inner = g.add(x, g.mul(cube, g.constFloat(0.044715)));
  const t = g.tanh(g.mul(inner, g.constFloat(Math.sqrt(2 / Math.PI))));
  return g.mul(g.mul(x, g.constFloat(0.5)), g.add(g.constFloat(1), t));
}

/** SiLU: x·sigmoid(x). */
export function silu(g: GraphBuilder, x: Value): Value {
  return g.mul(x, g.sigmoid(x));
}

/** y·(1 + scale) + shift: adaLN modulation (a DiT block's shift and scale). */
export function modulate(g: GraphBuilder, y: Value, shift: Value, scale: Value): Value {
  return g.add(g.mul(y, g.add(g.constFloat(1), scale)), shift);
}

/** [B, S, D] → [B, nH, S, d]. */
export function splitHeads(g: GraphBuilder, x: Value, heads: number, headDim: number): Value {
  return g.transpose(g.reshape(x, [0, 0, heads, headDim]), [0, 2, 1, 3]);
}

/** [B, nH, S, d] → [B, S, D]. */
export function mergeHeads(g: GraphBuilder, x: Value, dim: number): Value {
  return g.reshape(g.transpose(x, [0, 2, 1, 3]), [0, 0, dim]);
}

/**
 * Rotary embedding on interleaved pairs of x [B, nH, N, d] with cos, sin [N, d/2]:
 * (v[2m], v[2m+1]) → (v[2m]·cos − v[2m+1]·sin, v[2m]·sin + v[2m+1]·cos).
 */
export function applyRope(
  g: GraphBuilder,
  x: Value,
  cos: Value,
  sin: Value,
  headDim: number,
): Value {
  const pairs = g.reshape(x, [0, 0, 0, headDim / 2, 2]);
  const [re, im] = g.split(pairs, -1, 2) as [Value, Value];
  const c = g.unsqueeze(cos, [-1]);
  const s = g.unsqueeze(sin, [-1]);
  const outRe = g.sub(g.mul(re, c), g.mul(im, s));
  const outIm = g.add(g.mul(re, s), g.mul(im, c));
  return g.reshape(g.concat([outRe, outIm], -1), [0, 0, 0, headDim]);
}

/** softmax(q·kᵀ/√d)·v on [B, nH, S, d] heads. */
export function attention(g: GraphBuilder, q: Value, k: Value, v: Value, headDim: number): Value {
  const scores = g.div(g.matMul(q, g.transpose(k, [0, 1, 3, 2])), g.constFloat(Math.sqrt(headDim)));
  return g.matMul(g.softmax(scores, -1), v);
}
