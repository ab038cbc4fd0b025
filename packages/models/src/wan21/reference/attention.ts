import { linear } from './ops.js';

/** Sizes of one multi-head attention call over a batch. */
export interface AttentionDims {
  readonly batch: number;
  /** Query tokens per sample. */
  readonly queries: number;
  /** Key/value tokens per sample. */
  readonly keys: number;
  readonly heads: number;
  readonly headDim: number;
}

/**
 * Scratch reused across calls, for one (sample, head) at a time: the head's queries [Nq, d],
 * keys [Nk, d] and transposed values [d, Nk] gathered contiguously, the probabilities [Nq, Nk],
 * the head output [Nq, d], and zero biases for the two products.
 */
export interface AttentionScratch {
  readonly headQueries: Float32Array;
  readonly headKeys: Float32Array;
  readonly headValuesT: Float32Array;
  readonly probabilities: Float32Array;
  readonly headOut: Float32Array;
  readonly zeros: Float32Array;
  /** One row of float64 exponentials (the softmax numerators before normalisation). */
  readonly rowExp: Float64Array;
}

/** Allocates scratch for up to `queries` query and `keys` key tokens at head dim `headDim`. */
export function createAttentionScratch(
  queries: number,
  keys: number,
  headDim: number,
): AttentionScratch {
  return {
    headQueries: new Float32Array(queries * headDim),
    headKeys: new Float32Array(keys * headDim),
    headValuesT: new Float32Array(keys * headDim),
    probabilities: new Float32Array(queries * keys),
    headOut: new Float32Array(queries * headDim),
    zeros: new Float32Array(Math.max(keys, headDim)),
    rowExp: new Float64Array(keys),
  };
}

/** Copies the head's column block of `count` rows from a [rows, width] matrix into [count, d]. */
function gatherRows(
  dst: Float32Array,
  src: Float32Array,
  base: number,
  count: number,
  width: number,
  d: number,
): void {
  for (let m = 0; m < count; m++) {
    const o = base + m * width;
    for (let j = 0; j < d; j++) dst[m * d + j] = src[o + j]!;
  }
}

/** Like gatherRows, transposed: dst is [d, count]. */
function gatherColumns(
  dst: Float32Array,
  src: Float32Array,
  base: number,
  count: number,
  width: number,
  d: number,
): void {
  for (let m = 0; m < count; m++) {
    const o = base + m * width;
    for (let j = 0; j < d; j++) dst[j * count + m] = src[o + j]!;
  }
}

/**
 * Row softmax in place over logits·scale: max-subtracted exp and the sum in float64, stored
 * normalised as float32 (as an ONNX Softmax output).
 */
function softmaxRows(
  p: Float32Array,
  rows: number,
  cols: number,
  scale: number,
  rowExp: Float64Array,
): void {
  for (let r = 0; r < rows; r++) {
    const o = r * cols;
    let max = -Infinity;
    for (let m = 0; m < cols; m++) if (p[o + m]! > max) max = p[o + m]!;
    let sum = 0;
    for (let m = 0; m < cols; m++) {
      const e = Math.exp((p[o + m]! - max) * scale);
      rowExp[m] = e;
      sum += e;
    }
    const inv = 1 / sum;
    for (let m = 0; m < cols; m++) p[o + m] = rowExp[m]! * inv;
  }
}

/**
 * out = softmax(q·kᵀ/√d)·v per sample and head. q, out: [B·queries, heads·d]; k, v: [B·keys,
 * heads·d] (heads are column blocks, as after a Linear). Both products run through the blocked
 * `linear` kernel (float64 accumulation); logits and probabilities are stored as float32.
 */
export function attention(
  out: Float32Array,
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  dims: AttentionDims,
  scratch: AttentionScratch,
): void {
  const { batch, queries, keys, heads, headDim: d } = dims;
  const width = heads * d;
  const scale = 1 / Math.sqrt(d);
  const { headQueries, headKeys, headValuesT, probabilities, headOut, zeros, rowExp } = scratch;
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < heads; h++) {
      const qBase = b * queries * width + h * d;
      const kBase = b * keys * width + h * d;
      gatherRows(headQueries, q, qBase, queries, width, d);
      gatherRows(headKeys, k, kBase, keys, width, d);
      gatherColumns(headValuesT, v, kBase, keys, width, d);
      linear(probabilities, headQueries, queries, d, headKeys, zeros, keys);
      softmaxRows(probabilities, queries, keys, scale, rowExp);
      linear(headOut, probabilities, queries, keys, headValuesT, zeros, d);
      for (let n = 0; n < queries; n++) {
        const o = qBase + n * width;
        for (let j = 0; j < d; j++) out[o + j] = headOut[n * d + j]!;
      }
    }
  }
}

/**
 * Rotary embedding in place on every head of x [B·tokens, heads·d]: pair (v[2m], v[2m+1]) of token
 * n is rotated by the angle whose cos/sin are at [n, m] of the [tokens, d/2] tables.
 */
export function applyRope(
  x: Float32Array,
  batch: number,
  tokens: number,
  heads: number,
  headDim: number,
  cos: Float32Array,
  sin: Float32Array,
): void {
  const half = headDim / 2;
  const width = heads * headDim;
  for (let b = 0; b < batch; b++) {
    for (let n = 0; n < tokens; n++) {
      const row = (b * tokens + n) * width;
      const t = n * half;
      for (let h = 0; h < heads; h++) {
        const o = row + h * headDim;
        for (let m = 0; m < half; m++) {
          const c = cos[t + m]!;
          const s = sin[t + m]!;
          const a = x[o + 2 * m]!;
          const bb = x[o + 2 * m + 1]!;
          x[o + 2 * m] = a * c - bb * s;
          x[o + 2 * m + 1] = a * s + bb * c;
        }
      }
    }
  }
}
