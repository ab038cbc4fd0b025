import type { RolloutMetadata } from '../rollout-metadata.js';
import { rolloutVideoOf, type RolloutRecord } from '../rollout-record.js';
import type { ValidVectorSpec } from './valid-vectors.js';

/** Deterministic float32 latents with the v1 vectors' extremes first (-0, a subnormal, max). */
function latents(count: number, seed: number): Float32Array {
  const special = [-0, 2 ** -149, 3.4028234663852886e38];
  let state = seed >>> 0 || 1;
  return Float32Array.from({ length: count }, (_, i) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return i < special.length ? special[i]! : (state / 2 ** 32 - 0.5) * 8;
  });
}

/** RGB bytes that include 0 and 255 and differ per sample, frame, row, column and channel. */
function pixels(count: number, seed: number): Uint8Array {
  return Uint8Array.from({ length: count }, (_, i) =>
    i === 0 ? 0 : i === 1 ? 255 : (seed * 37 + i * 101) % 256,
  );
}

function sigmas(steps: number): Float64Array {
  return Float64Array.from({ length: steps + 1 }, (_, i) => 1 - i / steps);
}

interface V2Shape {
  readonly latentSteps: readonly number[];
  readonly frameIndices: readonly number[] | null;
}

function record(metadata: RolloutMetadata, shape: V2Shape, seed: number): RolloutRecord {
  const { steps: t, group: g, latentDims } = metadata;
  const n = latentDims.reduce((a, b) => a * b, 1);
  const video = rolloutVideoOf(metadata);
  const { latentSteps, frameIndices } = shape;
  const frameCount = frameIndices?.length ?? 0;
  const schedule = sigmas(t);
  return {
    metadata,
    latents: latents(latentSteps.length * g * n, seed),
    logProbs:
      metadata.sampler === 'sde'
        ? Float64Array.from({ length: t * g }, (_, i) => -1.25 - i / 3)
        : null,
    seeds: Array.from({ length: g }, (_, i) => seed * 10 + i),
    sigmas: schedule,
    timesteps: schedule.subarray(0, t).map((sigma) => 1000 * sigma),
    stepIndices: Int32Array.from({ length: t }, (_, i) => i),
    latentSteps: Int32Array.from(latentSteps),
    frameIndices: frameIndices === null ? null : Int32Array.from(frameIndices),
    frames: video === null ? null : pixels(g * frameCount * video.height * video.width * 3, seed),
  };
}

const BASE = {
  model: 'toy-dit',
  loopId: 'toy.denoise',
  prompt: 'a red fox running through fresh snow',
  negativePrompt: '',
  noiseLevel: 0.7,
  guidanceScale: 1,
  shift: 3,
  weightsVersions: { dit: 3, vae: 0 },
  backend: { dit: 'ort-cpu', vae: 'ort-cpu' },
  platform: { device: 'cpu', arch: 'x86-64-v3' },
  interceptors: [],
} as const;

/** The valid vectors of RolloutFile v2 (the v1 vectors stay valid for a v2 reader too). */
export function validV2VectorSpecs(): ValidVectorSpec[] {
  // Loosely typed on purpose: writeRolloutFile checks every vector against the v2 schema.
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
      name: 'frames-first',
      about:
        'the first frame of a 5-frame 2×3 clip per sample (N=1), every latent kept; sde, T=3, G=2, latent [4,2,1,1]',
      record: record(
        metadata({
          sampler: 'sde',
          steps: 3,
          group: 2,
          latentDims: [4, 2, 1, 1],
          video: { frames: 5, height: 2, width: 3 },
        }),
        { latentSteps: [0, 1, 2, 3], frameIndices: [0] },
        1,
      ),
    },
    {
      name: 'frames-every-2-window',
      about:
        'every 2nd frame (0, 2, 4 of 5) and a kept-steps window: x_1, x_2 (train step 1) and x_T; sde, T=4, G=2',
      record: record(
        metadata({
          sampler: 'sde',
          steps: 4,
          group: 2,
          latentDims: [4, 2, 1, 1],
          guidanceScale: 4.5,
          negativePrompt: 'blurry',
          cfgRule: 'above-one',
          video: { frames: 5, height: 2, width: 2 },
        }),
        { latentSteps: [1, 2, 4], frameIndices: [0, 2, 4] },
        2,
      ),
    },
    {
      name: 'window-no-frames',
      about: 'a kept-steps window without frames: video null, no frame tensors; ode, T=3, G=2',
      record: record(
        metadata({
          sampler: 'ode',
          steps: 3,
          group: 2,
          latentDims: [4, 1, 1, 1],
          noiseLevel: 0,
          video: null,
        }),
        { latentSteps: [2, 3], frameIndices: null },
        3,
      ),
    },
    {
      name: 'frames-all-group-1',
      about: 'every frame (0..4) of one sample (G=1, T=1): the smallest v2 shapes with frames',
      record: record(
        metadata({
          sampler: 'sde',
          steps: 1,
          group: 1,
          latentDims: [4, 2, 1, 1],
          prompt: 'ünïcödé prompt — 雪の狐 🦊',
          video: { frames: 5, height: 1, width: 2 },
        }),
        { latentSteps: [0, 1], frameIndices: [0, 1, 2, 3, 4] },
        4,
      ),
    },
    {
      name: 'extra-metadata',
      about:
        'added record fields a v2 reader keeps (a frame selection echo, a nested object), shift null; the final latent only',
      record: record(
        {
          ...metadata({
            sampler: 'sde',
            steps: 2,
            group: 2,
            latentDims: [4, 1, 1, 1],
            shift: null,
            video: { frames: 1, height: 1, width: 1 },
          }),
          frameSelection: { every: 4 },
          notes: { '10': 'ten', '9': 'nine' },
        },
        { latentSteps: [2], frameIndices: [0] },
        5,
      ),
    },
  ];
}
