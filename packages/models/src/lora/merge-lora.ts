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
 * @returns a new array; the inputs are not changed
 */
export function mergeLoraWeight(input: LoraMergeInput): Float32Array {
  const { weight, down, up, outFeatures: out, inFeatures: n, rank, scale } = input;
  const merged = new Float32Array(out * n);
  const acc = new Float64Array(n);
  for (let i = 0; i < out; i++) {
    acc.fill(0);
    for (let k = 0; k < rank; k++) {
      const b = up[i * rank + k]!;
      const row = k * n;
      for (let j = 0; j < n; j++) acc[j]! += b * down[row + j]!;
    }
    const base = i * n;
    for (let j = 0; j < n; j++) {
      merged[base + j] = Math.fround(weight[base + j]! + Math.fround(scale * acc[j]!));
    }
  }
  return merged;
}
