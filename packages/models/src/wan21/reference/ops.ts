// Row-wise kernels of the TS reference forward. Activations are stored as float32; every dot
// product, mean, variance and softmax sum is accumulated in float64 (JS numbers), and each output
// element depends only on its own row, so a batch of B gives bit-identical rows to B forwards of 1.

const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);

/**
 * y[r, o] = bias[o] + Σ_i x[r, i]·W[o, i] for r < rows (PyTorch Linear layout, W is [outDim, inDim]).
 * Register-blocked 2 rows × 4 outputs so each load feeds several multiply-adds; every output is
 * still accumulated in float64 in index order and then biased, so its value does not depend on
 * which row it was paired with (batch-consistent).
 */
export function linear(
  out: Float32Array,
  x: Float32Array,
  rows: number,
  inDim: number,
  weight: Float32Array,
  bias: Float32Array,
  outDim: number,
): void {
  const tail = outDim - (outDim % 4);
  let r = 0;
  for (; r + 2 <= rows; r += 2) {
    const xa = r * inDim;
    const xb = xa + inDim;
    const ya = r * outDim;
    const yb = ya + outDim;
    for (let o = 0; o < tail; o += 4) {
      const w0 = o * inDim;
      const w1 = w0 + inDim;
      const w2 = w1 + inDim;
      const w3 = w2 + inDim;
      let a0 = 0;
      let a1 = 0;
      let a2 = 0;
      let a3 = 0;
      let b0 = 0;
      let b1 = 0;
      let b2 = 0;
      let b3 = 0;
      for (let i = 0; i < inDim; i++) {
        const u = x[xa + i]!;
        const v = x[xb + i]!;
        const k0 = weight[w0 + i]!;
        const k1 = weight[w1 + i]!;
        const k2 = weight[w2 + i]!;
        const k3 = weight[w3 + i]!;
        a0 += u * k0;
        a1 += u * k1;
        a2 += u * k2;
        a3 += u * k3;
        b0 += v * k0;
        b1 += v * k1;
        b2 += v * k2;
        b3 += v * k3;
      }
      out[ya + o] = a0 + bias[o]!;
      out[ya + o + 1] = a1 + bias[o + 1]!;
      out[ya + o + 2] = a2 + bias[o + 2]!;
      out[ya + o + 3] = a3 + bias[o + 3]!;
      out[yb + o] = b0 + bias[o]!;
      out[yb + o + 1] = b1 + bias[o + 1]!;
      out[yb + o + 2] = b2 + bias[o + 2]!;
      out[yb + o + 3] = b3 + bias[o + 3]!;
    }
    linearTail(out, x, r, inDim, weight, bias, outDim, tail);
    linearTail(out, x, r + 1, inDim, weight, bias, outDim, tail);
  }
  if (r < rows) linearTail(out, x, r, inDim, weight, bias, outDim, 0);
}

/** Outputs [from, outDim) of one row, same accumulation order as the blocked path. */
function linearTail(
  out: Float32Array,
  x: Float32Array,
  r: number,
  inDim: number,
  weight: Float32Array,
  bias: Float32Array,
  outDim: number,
  from: number,
): void {
  const xa = r * inDim;
  for (let o = from; o < outDim; o++) {
    const w0 = o * inDim;
    let a = 0;
    for (let i = 0; i < inDim; i++) a += x[xa + i]! * weight[w0 + i]!;
    out[r * outDim + o] = a + bias[o]!;
  }
}

/**
 * Adaptive LayerNorm without affine, per row: out = LN(x)·(1 + scale) + shift, where row r uses
 * the modulation vectors of its sample b = ⌊r / rowsPerSample⌋ (`scale`/`shift` are [B, ·] tables
 * read at `b·stride + scaleOffset` / `b·stride + shiftOffset`). Pass `scale === undefined` for plain LN.
 */
export function modulatedLayerNorm(
  out: Float32Array,
  x: Float32Array,
  rows: number,
  dim: number,
  eps: number,
  modulation?: {
    readonly table: Float32Array;
    readonly stride: number;
    readonly rowsPerSample: number;
    readonly shiftOffset: number;
    readonly scaleOffset: number;
  },
): void {
  for (let r = 0; r < rows; r++) {
    const o = r * dim;
    let sum = 0;
    for (let i = 0; i < dim; i++) sum += x[o + i]!;
    const mean = sum / dim;
    let sq = 0;
    for (let i = 0; i < dim; i++) {
      const c = x[o + i]! - mean;
      sq += c * c;
    }
    const inv = 1 / Math.sqrt(sq / dim + eps);
    if (modulation === undefined) {
      for (let i = 0; i < dim; i++) out[o + i] = (x[o + i]! - mean) * inv;
      continue;
    }
    const base = Math.floor(r / modulation.rowsPerSample) * modulation.stride;
    const shift = base + modulation.shiftOffset;
    const scale = base + modulation.scaleOffset;
    const t = modulation.table;
    for (let i = 0; i < dim; i++) {
      out[o + i] = (x[o + i]! - mean) * inv * (1 + t[scale + i]!) + t[shift + i]!;
    }
  }
}

/** LayerNorm with affine weight and bias, per row. */
export function affineLayerNorm(
  out: Float32Array,
  x: Float32Array,
  rows: number,
  dim: number,
  eps: number,
  weight: Float32Array,
  bias: Float32Array,
): void {
  modulatedLayerNorm(out, x, rows, dim, eps);
  for (let r = 0; r < rows; r++) {
    const o = r * dim;
    for (let i = 0; i < dim; i++) out[o + i] = out[o + i]! * weight[i]! + bias[i]!;
  }
}

/** RMSNorm in place over each row of `dim`: x / sqrt(mean(x²) + eps) · weight. */
export function rmsNormInPlace(
  x: Float32Array,
  rows: number,
  dim: number,
  eps: number,
  weight: Float32Array,
): void {
  for (let r = 0; r < rows; r++) {
    const o = r * dim;
    let sq = 0;
    for (let i = 0; i < dim; i++) sq += x[o + i]! * x[o + i]!;
    const inv = 1 / Math.sqrt(sq / dim + eps);
    for (let i = 0; i < dim; i++) x[o + i] = x[o + i]! * inv * weight[i]!;
  }
}

/** GELU (tanh approximation) in place on the first `n` elements. */
export function geluInPlace(x: Float32Array, n: number = x.length): void {
  for (let i = 0; i < n; i++) {
    const v = x[i]!;
    x[i] = 0.5 * v * (1 + Math.tanh(SQRT_2_OVER_PI * (v + 0.044715 * v * v * v)));
  }
}

/** SiLU x·σ(x), out-of-place on the first `n` elements. */
export function silu(out: Float32Array, x: Float32Array, n: number = x.length): void {
  for (let i = 0; i < n; i++) {
    const v = x[i]!;
    out[i] = v / (1 + Math.exp(-v));
  }
}

/**
 * x += y · gate (gate read per sample from a [B, stride] table at `gateOffset`), or x += y when
 * `gate` is omitted.
 */
export function residualAdd(
  x: Float32Array,
  y: Float32Array,
  rows: number,
  dim: number,
  gate?: {
    readonly table: Float32Array;
    readonly stride: number;
    readonly rowsPerSample: number;
    readonly gateOffset: number;
  },
): void {
  if (gate === undefined) {
    for (let i = 0; i < rows * dim; i++) x[i] = x[i]! + y[i]!;
    return;
  }
  for (let r = 0; r < rows; r++) {
    const o = r * dim;
    const g = Math.floor(r / gate.rowsPerSample) * gate.stride + gate.gateOffset;
    for (let i = 0; i < dim; i++) x[o + i] = x[o + i]! + y[o + i]! * gate.table[g + i]!;
  }
}
