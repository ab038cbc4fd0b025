import type { RolloutMetadata } from '../../src/rollout/rollout-metadata.js';
import type { RolloutRecord } from '../../src/rollout/rollout-record.js';

/** A valid vector: a record the generator writes with `writeRolloutFile`. */
export interface ValidVectorSpec {
  readonly name: string;
  readonly about: string;
  readonly record: RolloutRecord;
}

/** A deterministic stream of uint32 (an LCG: the vectors need repeatability, not quality). */
function lcg(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state;
  };
}

/**
 * Float32 values that exercise exact round trips: -0, the smallest subnormal, the largest finite
 * float32, values that are not short decimals, then pseudo-random ones in [-4, 4).
 */
function latents(count: number, seed: number): Float32Array {
  const next = lcg(seed);
  const special = [-0, 2 ** -149, 3.4028234663852886e38, 0.1, -1 / 3];
  return Float32Array.from({ length: count }, (_, i) =>
    i < special.length ? special[i]! : (next() / 2 ** 32 - 0.5) * 8,
  );
}

/** Float64 log-probs with all 53 significand bits used. */
function logProbs(count: number, seed: number): Float64Array {
  const next = lcg(seed);
  return Float64Array.from({ length: count }, () => -(next() + next() / 2 ** 32) / 2 ** 24);
}

/** The linear-shift schedule σ_i = shift·s/(1 + (shift − 1)·s), s = 1 − i/T, σ_0 = 1, σ_T = 0. */
function sigmas(steps: number, shift: number): Float64Array {
  return Float64Array.from({ length: steps + 1 }, (_, i) => {
    if (i === 0) return 1;
    const s = 1 - i / steps;
    return (shift * s) / (1 + (shift - 1) * s);
  });
}

function record(
  metadata: RolloutMetadata,
  seeds: readonly number[],
  schedule: Float64Array,
  seed: number,
): RolloutRecord {
  const { steps: t, group: g, latentDims } = metadata;
  const n = latentDims.reduce((a, b) => a * b, 1);
  return {
    metadata,
    latents: latents((t + 1) * g * n, seed),
    logProbs: metadata.sampler === 'sde' ? logProbs(t * g, seed + 1) : null,
    seeds,
    sigmas: schedule,
    timesteps: schedule.subarray(0, t).map((sigma) => 1000 * sigma),
    stepIndices: Int32Array.from({ length: t }, (_, i) => i),
  };
}

const BASE = {
  model: 'toy-dit',
  loopId: 'toy.denoise',
  weightsVersions: { dit: 3, text_encoder: 0 },
  backend: { dit: 'ort-cpu', text_encoder: 'cpu-reference' },
  platform: { device: 'cpu', arch: 'x86-64-v3' },
  interceptors: [],
} as const;

/** The valid vectors of RolloutFile v1. */
export function validVectorSpecs(): ValidVectorSpec[] {
  // Loosely typed on purpose: writeRolloutFile checks every vector against the schema.
  const metadata = (fields: Readonly<Record<string, unknown>>): RolloutMetadata =>
    ({
      ...BASE,
      weightsVersions: { ...BASE.weightsVersions },
      backend: { ...BASE.backend },
      platform: { ...BASE.platform },
      interceptors: [],
      ...fields,
    }) as unknown as RolloutMetadata;
  return [
    {
      name: 'sde-cfg',
      about:
        'sde sampler with classifier-free guidance (scale 4.5, a negative prompt), T=3, G=2, latent [4,1,2,2]',
      record: record(
        metadata({
          prompt: 'a red fox running through fresh snow',
          negativePrompt: 'blurry, low quality',
          sampler: 'sde',
          steps: 3,
          group: 2,
          latentDims: [4, 1, 2, 2],
          noiseLevel: 0.7,
          guidanceScale: 4.5,
          shift: 3,
        }),
        [1, 2 ** 53 - 1],
        sigmas(3, 3),
        11,
      ),
    },
    {
      name: 'ode',
      about: 'ode sampler: no log_probs tensor and summary logProbs null; no guidance (scale 1)',
      record: record(
        metadata({
          prompt: 'a lighthouse at dusk',
          negativePrompt: '',
          sampler: 'ode',
          steps: 2,
          group: 2,
          latentDims: [4, 1, 2, 2],
          noiseLevel: 0,
          guidanceScale: 1,
          shift: 5,
        }),
        [7, 8],
        sigmas(2, 5),
        21,
      ),
    },
    {
      name: 'group-1',
      about: 'one sample (G=1) and one step (T=1): the smallest shapes',
      record: record(
        metadata({
          prompt: 'ünïcödé prompt — 雪の狐 🦊',
          negativePrompt: '',
          sampler: 'sde',
          steps: 1,
          group: 1,
          latentDims: [4, 1, 2, 2],
          noiseLevel: 1,
          guidanceScale: 1,
          shift: 1,
        }),
        [0],
        sigmas(1, 1),
        31,
      ),
    },
    {
      name: 'latent-rank-2',
      about:
        'a latent of rank 2 ([3, 5], not the 4-D shape of a video DiT): latents is [T+1, G, 3, 5]',
      record: record(
        metadata({
          model: 'toy-2d',
          loopId: 'toy.denoise',
          prompt: 'a square',
          negativePrompt: '',
          sampler: 'sde',
          steps: 2,
          group: 3,
          latentDims: [3, 5],
          noiseLevel: 0.5,
          guidanceScale: 2,
          shift: 2,
          weightsVersions: { denoiser: 1 },
          backend: { denoiser: 'cpu-reference' },
        }),
        [5, 6, 9],
        sigmas(2, 2),
        41,
      ),
    },
    {
      name: 'extra-metadata',
      about:
        'the optional cfgRule (above-one), added metadata fields a v1 reader keeps (maxStaleness, a nested object, a platform extra) and shift null (explicit sigmas)',
      record: record(
        {
          ...metadata({
            prompt: 'a boat',
            negativePrompt: 'fog',
            sampler: 'sde',
            steps: 2,
            group: 2,
            latentDims: [4, 1, 2, 2],
            noiseLevel: 0.7,
            guidanceScale: 3,
            shift: null,
            interceptors: ['trace'],
            platform: { device: 'cpu', arch: 'aarch64', cpuArch: 'neoverse-n1' },
          }),
          cfgRule: 'above-one',
          maxStaleness: 2,
          notes: { tags: ['a', 'b'], '10': 'ten', '9': 'nine' },
        },
        [3, 4],
        Float64Array.of(1, 0.625, 0),
        51,
      ),
    },
  ];
}
