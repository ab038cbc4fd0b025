// A deliberately naive, float64-everywhere transcription of the wan21 spec (README
// "Architecture"), written without the reference forward's kernels, to check it end to end.
import { describe, expect, it } from 'vitest';
import { gaussianNoise } from '@flowfleet/numerics';
import type { TensorData } from '@flowfleet/platform';
import { initWeights } from '../init-weights.js';
import { tokenize } from '../tokenize.js';
import { createWan21Config } from '../wan21-config.js';
import type { Wan21Config } from '../wan21-config.js';
import { ditForward } from './dit-forward.js';
import { textEncoderForward } from './text-encoder-forward.js';

type Mat = number[][];
type W = ReadonlyMap<string, TensorData>;

const arr = (w: W, name: string): number[] => Array.from(w.get(name)!.data as Float32Array);
function lin(w: W, name: string, x: Mat): Mat {
  const weight = arr(w, `${name}.weight`);
  const bias = arr(w, `${name}.bias`);
  const inDim = x[0]!.length;
  return x.map((row) =>
    bias.map((b, o) => row.reduce((s, v, i) => s + v * weight[o * inDim + i]!, b)),
  );
}
const gelu = (v: number) =>
  0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v ** 3)));
const siluF = (v: number) => v / (1 + Math.exp(-v));
function ln(row: number[], eps: number): number[] {
  const mean = row.reduce((a, b) => a + b, 0) / row.length;
  const variance = row.reduce((a, b) => a + (b - mean) ** 2, 0) / row.length;
  return row.map((v) => (v - mean) / Math.sqrt(variance + eps));
}
function rms(row: number[], weight: number[], eps: number): number[] {
  const ms = row.reduce((a, b) => a + b * b, 0) / row.length;
  return row.map((v, i) => (v / Math.sqrt(ms + eps)) * weight[i]!);
}

function attend(q: Mat, k: Mat, v: Mat, heads: number, angles?: number[][]): Mat {
  const d = q[0]!.length / heads;
  const rot = (row: number[], n: number): number[] => {
    if (angles === undefined) return row;
    const out = row.slice();
    for (let h = 0; h < heads; h++) {
      for (let m = 0; m < d / 2; m++) {
        const a = row[h * d + 2 * m]!;
        const b = row[h * d + 2 * m + 1]!;
        const th = angles[n]![m]!;
        out[h * d + 2 * m] = a * Math.cos(th) - b * Math.sin(th);
        out[h * d + 2 * m + 1] = a * Math.sin(th) + b * Math.cos(th);
      }
    }
    return out;
  };
  const qr = q.map(rot);
  const kr = k.map(rot);
  return qr.map((qrow) => {
    const out = new Array<number>(qrow.length).fill(0);
    for (let h = 0; h < heads; h++) {
      const logits = kr.map((krow) => {
        let s = 0;
        for (let j = 0; j < d; j++) s += qrow[h * d + j]! * krow[h * d + j]!;
        return s / Math.sqrt(d);
      });
      const max = Math.max(...logits);
      const e = logits.map((l) => Math.exp(l - max));
      const sum = e.reduce((a, b) => a + b, 0);
      for (let j = 0; j < d; j++) {
        out[h * d + j] = e.reduce((s, p, m) => s + (p / sum) * v[m]![h * d + j]!, 0);
      }
    }
    return out;
  });
}

/** One sample: latent [C][F][H][W] flat, context [L][textDim] flat → velocity flat. */
function naiveDit(
  w: W,
  c: Wan21Config,
  latent: Float32Array,
  dims: number[],
  t: number,
  context: Float32Array,
): number[] {
  const [, C, F, H, W2] = dims as [number, number, number, number, number];
  const [pt, ph, pw] = c.patch;
  const f = F / pt,
    h = H / ph,
    wd = W2 / pw;
  const D = c.dim;
  const at = (ch: number, fi: number, hi: number, wi: number) =>
    latent[((ch * F + fi) * H + hi) * W2 + wi]!;
  const pe = arr(w, 'patch_embedding.weight');
  const peb = arr(w, 'patch_embedding.bias');
  let x: Mat = [];
  const angles: number[][] = [];
  const d = D / c.heads;
  const cH = Math.floor(d / 2 / 3);
  const cF = d / 2 - 2 * cH;
  for (let fi = 0; fi < f; fi++)
    for (let hi = 0; hi < h; hi++)
      for (let wi = 0; wi < wd; wi++) {
        const row = peb.slice();
        for (let o = 0; o < D; o++)
          for (let ch = 0; ch < C; ch++)
            for (let i = 0; i < pt; i++)
              for (let j = 0; j < ph; j++)
                for (let k = 0; k < pw; k++) {
                  row[o]! +=
                    pe[(((o * C + ch) * pt + i) * ph + j) * pw + k]! *
                    at(ch, fi * pt + i, hi * ph + j, wi * pw + k);
                }
        x.push(row);
        const a: number[] = [];
        for (let kk = 0; kk < cF; kk++) a.push(fi * 10000 ** (-kk / cF));
        for (let kk = 0; kk < cH; kk++) a.push(hi * 10000 ** (-kk / cH));
        for (let kk = 0; kk < cH; kk++) a.push(wi * 10000 ** (-kk / cH));
        angles.push(a);
      }
  const half = c.freqDim / 2;
  const s = [...Array(half).keys()]
    .map((k) => Math.cos(t * 10000 ** (-k / half)))
    .concat([...Array(half).keys()].map((k) => Math.sin(t * 10000 ** (-k / half))));
  const e = lin(
    w,
    'time_embedding.2',
    lin(w, 'time_embedding.0', [s]).map((r) => r.map(siluF)),
  )[0]!;
  const e0 = lin(w, 'time_projection.1', [e.map(siluF)])[0]!;
  const ctxIn: Mat = [];
  for (let l = 0; l < context.length / c.textDim; l++)
    ctxIn.push(Array.from(context.subarray(l * c.textDim, (l + 1) * c.textDim)));
  const ctx = lin(
    w,
    'text_embedding.2',
    lin(w, 'text_embedding.0', ctxIn).map((r) => r.map(gelu)),
  );
  for (let i = 0; i < c.layers; i++) {
    const p = `blocks.${i}.`;
    const modTable = arr(w, `${p}modulation`);
    const m = [0, 1, 2, 3, 4, 5].map((k) =>
      modTable.slice(k * D, (k + 1) * D).map((v, j) => v + e0[k * D + j]!),
    );
    let y = x.map((row) => ln(row, c.eps).map((v, j) => v * (1 + m[1]![j]!) + m[0]![j]!));
    const sq = lin(w, `${p}self_attn.q`, y).map((r) =>
      rms(r, arr(w, `${p}self_attn.norm_q.weight`), c.eps),
    );
    const sk = lin(w, `${p}self_attn.k`, y).map((r) =>
      rms(r, arr(w, `${p}self_attn.norm_k.weight`), c.eps),
    );
    const sv = lin(w, `${p}self_attn.v`, y);
    const sa = lin(w, `${p}self_attn.o`, attend(sq, sk, sv, c.heads, angles));
    x = x.map((row, n) => row.map((v, j) => v + sa[n]![j]! * m[2]![j]!));
    const n3w = arr(w, `${p}norm3.weight`);
    const n3b = arr(w, `${p}norm3.bias`);
    y = x.map((row) => ln(row, c.eps).map((v, j) => v * n3w[j]! + n3b[j]!));
    const cq = lin(w, `${p}cross_attn.q`, y).map((r) =>
      rms(r, arr(w, `${p}cross_attn.norm_q.weight`), c.eps),
    );
    const ck = lin(w, `${p}cross_attn.k`, ctx).map((r) =>
      rms(r, arr(w, `${p}cross_attn.norm_k.weight`), c.eps),
    );
    const cv = lin(w, `${p}cross_attn.v`, ctx);
    const ca = lin(w, `${p}cross_attn.o`, attend(cq, ck, cv, c.heads));
    x = x.map((row, n) => row.map((v, j) => v + ca[n]![j]!));
    y = x.map((row) => ln(row, c.eps).map((v, j) => v * (1 + m[4]![j]!) + m[3]![j]!));
    const ff = lin(
      w,
      `${p}ffn.2`,
      lin(w, `${p}ffn.0`, y).map((r) => r.map(gelu)),
    );
    x = x.map((row, n) => row.map((v, j) => v + ff[n]![j]! * m[5]![j]!));
  }
  const hmTable = arr(w, 'head.modulation');
  const h0 = hmTable.slice(0, D).map((v, j) => v + e[j]!);
  const h1 = hmTable.slice(D, 2 * D).map((v, j) => v + e[j]!);
  const out = lin(
    w,
    'head.head',
    x.map((row) => ln(row, c.eps).map((v, j) => v * (1 + h1[j]!) + h0[j]!)),
  );
  const velocity = new Array<number>(latent.length).fill(0);
  let n = 0;
  for (let fi = 0; fi < f; fi++)
    for (let hi = 0; hi < h; hi++)
      for (let wi = 0; wi < wd; wi++, n++) {
        for (let i = 0; i < pt; i++)
          for (let j = 0; j < ph; j++)
            for (let k = 0; k < pw; k++)
              for (let ch = 0; ch < C; ch++) {
                velocity[((ch * F + fi * pt + i) * H + hi * ph + j) * W2 + wi * pw + k] =
                  out[n]![((i * ph + j) * pw + k) * C + ch]!;
              }
      }
  return velocity;
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

describe('reference forward vs a naive transcription of the spec', () => {
  // Small but complete: 2 layers, non-square grid, f > 1, patch with pt = 2 to exercise every axis.
  const config = createWan21Config({
    dim: 48,
    heads: 2,
    ffnDim: 64,
    freqDim: 16,
    textDim: 24,
    textLen: 5,
    textHidden: 32,
    patch: [2, 2, 2],
  });

  it('matches the DiT velocity within float32 rounding', () => {
    const w = initWeights(config, 3, 'dit');
    const dims = [1, 4, 4, 6, 4] as const;
    const latent = gaussianNoise(11, 0, 4 * 4 * 6 * 4);
    const context = gaussianNoise(11, 1, 5 * 24);
    const t = 731.25;
    const fast = ditForward(w, config, { latent, dims, timestep: [t], context });
    const slow = naiveDit(w, config, latent, [...dims], t, context);
    expect(maxAbsDiff(fast, slow)).toBeLessThan(1e-5); // measured 4.5e-7
    expect(Math.max(...slow.map(Math.abs))).toBeGreaterThan(0.5);
  });

  it('matches the text encoder', () => {
    const w = initWeights(config, 3, 'text_encoder');
    const tokens = tokenize(['hello', 'wörld!'], config);
    const fast = textEncoderForward(w, tokens, config);
    const emb = arr(w, 'text_encoder.token_embedding.weight');
    const pos = arr(w, 'text_encoder.pos_embedding');
    const E = config.textDim;
    const hRows: Mat = [...tokens].map((id, r) =>
      emb
        .slice(id * E, (id + 1) * E)
        .map((v, i) => Math.fround(v + pos[(r % config.textLen) * E + i]!)),
    );
    const mlp = lin(
      w,
      'text_encoder.mlp.2',
      lin(
        w,
        'text_encoder.mlp.0',
        hRows.map((r) => ln(r, config.eps)),
      ).map((r) => r.map(gelu)),
    );
    const slow = hRows.flatMap((row, r) => row.map((v, i) => v + mlp[r]![i]!));
    expect(fast.length).toBe(2 * 5 * 24);
    expect(maxAbsDiff(fast, slow)).toBeLessThan(1e-5);
  });
});
