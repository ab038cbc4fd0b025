import type { Wan21Config } from '../wan21-config.js';
import type { GraphBuilder, Value } from '../../onnx/graph-builder.js';
import {
  applyRope,
  attention,
  geluTanh,
  layerNormAffine,
  layerNormNoAffine,
  linear,
  mergeHeads,
  modulate,
  rmsNorm,
  silu,
  splitHeads,
  type ParamLookup,
} from '../../onnx/layers.js';

/** Step 1: Conv3d with stride = kernel = patch, then [B, D, f, h, w] → tokens [B, N, D]. */
export function patchify(
  g: GraphBuilder,
  p: ParamLookup,
  latent: Value,
  config: Wan21Config,
): Value {
  const conv = g.conv(latent, p('patch_embedding.weight'), p('patch_embedding.bias'), config.patch);
  return g.transpose(g.reshape(conv, [0, 0, -1]), [0, 2, 1]);
}

/**
 * Step 2: sinusoidal embedding [cos(t·ω), sin(t·ω)] computed in float64 (t up to 1000 makes a
 * float32 angle lose ~3e-5), then e = time_embedding(s) [B, D] and e0 [B, 6, D].
 */
export function timeEmbedding(
  g: GraphBuilder,
  p: ParamLookup,
  timestep: Value,
  config: Wan21Config,
): { e: Value; e0: Value } {
  const half = config.freqDim / 2;
  const omega = Array.from({ length: half }, (_, k) => Math.pow(10000, -k / half));
  const angles = g.mul(
    g.cast(g.unsqueeze(timestep, [1]), 'double'),
    g.constDouble(omega, [1, half]),
  );
  const s = g.cast(g.concat([g.cos(angles), g.sin(angles)], -1), 'float');
  const e = linear(g, p, silu(g, linear(g, p, s, 'time_embedding.0')), 'time_embedding.2');
  const e0 = g.reshape(linear(g, p, silu(g, e), 'time_projection.1'), [0, 6, config.dim]);
  return { e, e0 };
}

/** Step 3: ctx = text_embedding.2(GELU(text_embedding.0(context))) → [B, L, D]. */
export function textEmbedding(g: GraphBuilder, p: ParamLookup, context: Value): Value {
  return linear(g, p, geluTanh(g, linear(g, p, context, 'text_embedding.0')), 'text_embedding.2');
}

/** Inputs every block shares. */
export interface BlockInputs {
  readonly e0: Value;
  readonly ctx: Value;
  readonly ropeCos: Value;
  readonly ropeSin: Value;
}

/** Step 5: one Wan block (modulated self-attention with RoPE, cross-attention, modulated FFN). */
export function ditBlock(
  g: GraphBuilder,
  p: ParamLookup,
  x: Value,
  index: number,
  shared: BlockInputs,
  config: Wan21Config,
): Value {
  const pre = `blocks.${index}.`;
  const { dim, heads, eps } = config;
  const d = dim / heads;
  const [m0, m1, m2, m3, m4, m5] = g.scope(`${pre}modulation`, () =>
    g.split(g.add(p(`${pre}modulation`), shared.e0), 1, 6),
  ) as [Value, Value, Value, Value, Value, Value];

  const selfAttn = g.scope(`${pre}self_attn`, () => {
    const y = modulate(g, layerNormNoAffine(g, x, dim, eps), m0, m1);
    const a = `${pre}self_attn.`;
    const q = rmsNorm(g, linear(g, p, y, `${a}q`), p(`${a}norm_q.weight`), eps);
    const k = rmsNorm(g, linear(g, p, y, `${a}k`), p(`${a}norm_k.weight`), eps);
    const v = linear(g, p, y, `${a}v`);
    const qh = applyRope(g, splitHeads(g, q, heads, d), shared.ropeCos, shared.ropeSin, d);
    const kh = applyRope(g, splitHeads(g, k, heads, d), shared.ropeCos, shared.ropeSin, d);
    const out = mergeHeads(g, attention(g, qh, kh, splitHeads(g, v, heads, d), d), dim);
    return linear(g, p, out, `${a}o`);
  });
  x = g.add(x, g.mul(selfAttn, m2));

  const crossAttn = g.scope(`${pre}cross_attn`, () => {
    const y = layerNormAffine(g, p, x, `${pre}norm3`, eps);
    const a = `${pre}cross_attn.`;
    const q = rmsNorm(g, linear(g, p, y, `${a}q`), p(`${a}norm_q.weight`), eps);
    const k = rmsNorm(g, linear(g, p, shared.ctx, `${a}k`), p(`${a}norm_k.weight`), eps);
    const v = linear(g, p, shared.ctx, `${a}v`);
    const heads3 = (t: Value): Value => splitHeads(g, t, heads, d);
    const out = mergeHeads(g, attention(g, heads3(q), heads3(k), heads3(v), d), dim);
    return linear(g, p, out, `${a}o`);
  });
  x = g.add(x, crossAttn);

  const ffn = g.scope(`${pre}ffn`, () => {
    const y = modulate(g, layerNormNoAffine(g, x, dim, eps), m3, m4);
    return linear(g, p, geluTanh(g, linear(g, p, y, `${pre}ffn.0`)), `${pre}ffn.2`);
  });
  return g.add(x, g.mul(ffn, m5));
}

/** Step 6: out = head.head(LN(x)·(1 + h1) + h0) with [h0, h1] = head.modulation + e → [B, N, P]. */
export function ditHead(
  g: GraphBuilder,
  p: ParamLookup,
  x: Value,
  e: Value,
  config: Wan21Config,
): Value {
  const [h0, h1] = g.split(g.add(p('head.modulation'), g.unsqueeze(e, [1])), 1, 2) as [
    Value,
    Value,
  ];
  return linear(
    g,
    p,
    modulate(g, layerNormNoAffine(g, x, config.dim, config.eps), h0, h1),
    'head.head',
  );
}

/**
 * Step 7: out [B, N, P] with P ordered (pt, ph, pw, C) → velocity [B, C, F, H, W]. The grid comes
 * from the latent's runtime shape, so the eager graph serves any (F, H, W).
 */
export function unpatchify(g: GraphBuilder, out: Value, latent: Value, config: Wan21Config): Value {
  const [pt, ph, pw] = config.patch;
  const latentShape = g.shape(latent);
  const bfhw = g.gather(latentShape, g.constInt64([0, 2, 3, 4]));
  const grid = g.node('Div', [bfhw, g.constInt64([1, pt, ph, pw])]);
  const target = g.concat([grid, g.constInt64([pt, ph, pw, config.outChannels])], 0);
  const blocks = g.reshape(out, target);
  // [B, f, h, w, pt, ph, pw, C] → [B, C, f, pt, h, ph, w, pw]
  const ordered = g.transpose(blocks, [0, 7, 1, 4, 2, 5, 3, 6]);
  return g.reshape(ordered, latentShape);
}
