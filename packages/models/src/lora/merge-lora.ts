/** One layer's merge inputs: W [out, in], A [rank, in], B [out, rank], all float32, and s. */
export interface LoraMergeInput {
  readonly weight: Float32Array;
  readonly down: Float32Array;
  readonly up: Float32Array;
  readonly outFeatures: number;
  readonly inFeatures: number;
  readonly rank: number;
  readonly scale: number;
}

/**
 * W + s·B·A, the one merge rule of a LoRA sync, defined to the bit so a trainer can reproduce it:
 * for each element, acc = Σ_k B[i,k]·A[k,j] summed in float64 in ascending k (each product of
 * two float32 values is exact in float64; each addition rounds once), Δ = float32(s·acc) with s
 * in float64, and W' = float32(W + Δ) — which is the IEEE float32 sum of W and Δ (a float64 sum
 * of two float32 values rounded to float32 is correctly rounded). numpy or PyTorch reproduce it
 * with float64 arrays: `acc += outer(B[:, k], A[k, :])` for k in order, then the two casts.
 *
 * Computed as dot products of a row of B with a column of A (A transposed once, both widened to
 * float64 exactly), two rows by four columns at a time: the same products added in the same
 * order as the rule above, so the bits are the rule's, ~3× faster than an outer-product loop.
 * @param into where to write W' (out·in values, not one of the inputs; default a new array)
 * @returns `into` or a new array; the inputs are not changed (W may be a version in use)
 */
export function mergeLoraWeight(
  input: LoraMergeInput,
  into: Float32Array = new Float32Array(input.outFeatures * input.inFeatures),
): Float32Array {
  const { weight, down, up, outFeatures: out, inFeatures: n, rank, scale } = input;
  const merged = into;
  // aT[j·rank + k] = A[k, j]; b[i·rank + k] = B[i, k] (float32 → float64 is exact).
  const aT = new Float64Array(n * rank);
  for (let k = 0; k < rank; k++) {
    const row = k * n;
    for (let j = 0; j < n; j++) aT[j * rank + k] = down[row + j]!;
  }
  const b = Float64Array.from(up);
  /** One element (the blocks' remainder): acc = Σ_k B[i,k]·A[k,j], ascending k. */
  const single = (i: number, j: number): void => {
    const bi = i * rank;
    const aj = j * rank;
    let acc = 0;
    for (let k = 0; k < rank; k++) acc += b[bi + k]! * aT[aj + k]!;
    merged[i * n + j] = Math.fround(weight[i * n + j]! + Math.fround(scale * acc));
  };
  const n4 = n - (n % 4);
  let i = 0;
  for (; i + 1 < out; i += 2) {
    const b0 = i * rank;
    const b1 = b0 + rank;
    const row0 = i * n;
    const row1 = row0 + n;
    for (let j = 0; j < n4; j += 4) {
      const a0 = j * rank;
      const a1 = a0 + rank;
      const a2 = a1 + rank;
      const a3 = a2 + rank;
      let s00 = 0;
      let s01 = 0;
      let s02 = 0;
      let s03 = 0;
      let s10 = 0;
      let s11 = 0;
      let s12 = 0;
      let s13 = 0;
      for (let k = 0; k < rank; k++) {
        const x = b[b0 + k]!;
        const y = b[b1 + k]!;
        const c0 = aT[a0 + k]!;
        const c1 = aT[a1 + k]!;
        const c2 = aT[a2 + k]!;
        const c3 = aT[a3 + k]!;
        s00 += x * c0;
        s01 += x * c1;
        s02 += x * c2;
        s03 += x * c3;
        s10 += y * c0;
        s11 += y * c1;
        s12 += y * c2;
        s13 += y * c3;
      }
      merged[row0 + j] = Math.fround(weight[row0 + j]! + Math.fround(scale * s00));
      merged[row0 + j + 1] = Math.fround(weight[row0 + j + 1]! + Math.fround(scale * s01));
      merged[row0 + j + 2] = Math.fround(weight[row0 + j + 2]! + Math.fround(scale * s02));
      merged[row0 + j + 3] = Math.fround(weight[row0 + j + 3]! + Math.fround(scale * s03));
      merged[row1 + j] = Math.fround(weight[row1 + j]! + Math.fround(scale * s10));
      merged[row1 + j + 1] = Math.fround(weight[row1 + j + 1]! + Math.fround(scale * s11));
      merged[row1 + j + 2] = Math.fround(weight[row1 + j + 2]! + Math.fround(scale * s12));
      merged[row1 + j + 3] = Math.fround(weight[row1 + j + 3]! + Math.fround(scale * s13));
    }
    for (let j = n4; j < n; j++) {
      single(i, j);
      single(i + 1, j);
    }
  }
  for (; i < out; i++) for (let j = 0; j < n; j++) single(i, j);
  return merged;
}
