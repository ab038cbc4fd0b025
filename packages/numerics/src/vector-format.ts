/** The case groups of a golden-vectors file (shared/golden/README.md), in file order. */
export const VECTOR_GROUPS = [
  'philox_kat',
  'normals',
  'sigmas',
  'euler',
  'cfg',
  'sde_sample',
  'sde_recompute',
] as const;

/** One case group of a vectors file. */
export type VectorGroup = (typeof VECTOR_GROUPS)[number];

/** `ctr` (4 uint32) and `key` (2 uint32) → `out` (4 uint32). */
export interface PhiloxKatCase {
  readonly ctr: readonly number[];
  readonly key: readonly number[];
  readonly out: readonly number[];
}

/** `out` = gaussianNoise(seed, stream, n). */
export interface NormalsCase {
  readonly seed: number;
  readonly stream: number;
  readonly n: number;
  readonly out: readonly number[];
}

/** `out` = linearShiftSigmas(steps, shift). */
export interface SigmasCase {
  readonly steps: number;
  readonly shift: number;
  readonly out: readonly number[];
}

/** `out` = flowMatchStep(x, v, sigma, sigmaNext). */
export interface EulerCase {
  readonly x: readonly number[];
  readonly v: readonly number[];
  readonly sigma: number;
  readonly sigmaNext: number;
  readonly out: readonly number[];
}

/** `out` = cfgCombine(uncond, cond, scale). */
export interface CfgCase {
  readonly uncond: readonly number[];
  readonly cond: readonly number[];
  readonly scale: number;
  readonly out: readonly number[];
}

/** A sampling SDE step: noise from (seed, stream), σ = sigmas[step], σ' = sigmas[step + 1]. */
export interface SdeSampleCase {
  readonly x: readonly number[];
  readonly v: readonly number[];
  readonly sigmas: readonly number[];
  readonly step: number;
  readonly noiseLevel: number;
  readonly seed: number;
  readonly stream: number;
  readonly stdDevT: number;
  readonly sample: readonly number[];
  readonly mean: readonly number[];
  readonly logProb: number;
  readonly std: number;
}

/** A recomputing SDE step: the log-prob of a given `prevSample`. */
export interface SdeRecomputeCase {
  readonly x: readonly number[];
  readonly v: readonly number[];
  readonly sigmas: readonly number[];
  readonly step: number;
  readonly noiseLevel: number;
  readonly prevSample: readonly number[];
  readonly stdDevT: number;
  readonly mean: readonly number[];
  readonly logProb: number;
}

/** A validated vectors file: every group is optional, at least one case is present. */
export interface GoldenVectors {
  readonly philox_kat?: readonly PhiloxKatCase[];
  readonly normals?: readonly NormalsCase[];
  readonly sigmas?: readonly SigmasCase[];
  readonly euler?: readonly EulerCase[];
  readonly cfg?: readonly CfgCase[];
  readonly sde_sample?: readonly SdeSampleCase[];
  readonly sde_recompute?: readonly SdeRecomputeCase[];
}
