import { canonicalJson } from '../../canonical-json.js';
import { writeSafetensors } from '../../safetensors/write-safetensors.js';
import { METADATA, R, tensors, type InvalidVectorSpec, type Tensors } from './vector-parts.js';

/** The record of the base v2 file: T=2, G=2, latent [2, 2], a 3-frame 1×2 clip. */
const META_V2 = { ...METADATA, video: { frames: 3, height: 1, width: 2 } };

/** The tensors of a valid v2 file: x_1, x_2 kept, frames 0 and 2 of each sample. */
function tensorsV2(): Tensors {
  const v1 = tensors();
  return {
    ...v1,
    latent_steps: { dtype: 'I32', shape: [2], data: Int32Array.of(1, 2) },
    latents: {
      dtype: 'F32',
      shape: [2, 2, 2, 2],
      data: Float32Array.from({ length: 16 }, (_, i) => i / 8),
    },
    frame_indices: { dtype: 'I32', shape: [2], data: Int32Array.of(0, 2) },
    frames: {
      dtype: 'U8',
      shape: [2, 2, 1, 2, 3],
      data: Uint8Array.from({ length: 24 }, (_, i) => i * 10),
    },
  };
}

function v2(
  patch: Readonly<Record<string, Tensors[string] | undefined>> = {},
  meta: unknown = META_V2,
  version = '2',
): Uint8Array {
  const all = { ...tensorsV2(), ...patch };
  const present = Object.fromEntries(
    Object.entries(all).filter(([, t]) => t !== undefined),
  ) as Tensors;
  return writeSafetensors(present, {
    format: 'flowfleet.rollout',
    format_version: version,
    rollout: canonicalJson(meta),
  });
}

const i32 = (...values: number[]) =>
  ({ dtype: 'I32', shape: [values.length], data: Int32Array.from(values) }) as const;

/** Malformed RolloutFile v2 vectors, each breaking exactly one rule (v2's own rules and v1's in v2's layout). */
export function invalidV2VectorSpecs(): InvalidVectorSpec[] {
  const noVideo = Object.fromEntries(Object.entries(META_V2).filter(([k]) => k !== 'video'));
  return [
    {
      name: 'unsupported-version',
      about: 'format_version "3": newer than this reader',
      code: R,
      reason: 'unsupported-version',
      bytes: v2({}, META_V2, '3'),
    },
    {
      name: 'v2-without-video',
      about: 'a v2 record without its required video key',
      code: R,
      reason: 'rollout-schema',
      bytes: v2({}, noVideo),
    },
    {
      name: 'video-zero-frames',
      about: 'video.frames 0',
      code: R,
      reason: 'rollout-schema',
      bytes: v2({}, { ...META_V2, video: { frames: 0, height: 1, width: 2 } }),
    },
    {
      name: 'video-extra-key',
      about: 'video with a fourth key (channels)',
      code: R,
      reason: 'rollout-schema',
      bytes: v2({}, { ...META_V2, video: { ...META_V2.video, channels: 3 } }),
    },
    {
      name: 'reserved-latent-steps',
      about: 'the record carries latentSteps, a name the v2 summary reserves',
      code: R,
      reason: 'rollout-schema',
      bytes: v2({}, { ...META_V2, latentSteps: [1, 2] }),
    },
    {
      name: 'v1-with-video',
      about: "a v1 file whose record has v2's video key (the version is the file's, not the key's)",
      code: R,
      reason: 'rollout-schema',
      bytes: writeSafetensors(tensors(), {
        format: 'flowfleet.rollout',
        format_version: '1',
        rollout: canonicalJson({ ...METADATA, video: null }),
      }),
    },
    {
      name: 'frames-with-null-video',
      about: 'frame tensors in a file whose video is null',
      code: R,
      reason: 'unexpected-tensor',
      bytes: v2({}, { ...META_V2, video: null }),
    },
    {
      name: 'missing-latent-steps',
      about: 'a v2 file without latent_steps',
      code: R,
      reason: 'missing-tensor',
      bytes: v2({ latent_steps: undefined }),
    },
    {
      name: 'latent-steps-i64',
      about: 'latent_steps stored as I64',
      code: R,
      reason: 'tensor-dtype',
      bytes: v2({ latent_steps: { dtype: 'I64', shape: [2], data: BigInt64Array.of(1n, 2n) } }),
    },
    {
      name: 'latent-steps-too-long',
      about: 'latent_steps with T + 2 entries',
      code: R,
      reason: 'tensor-shape',
      bytes: v2({ latent_steps: i32(0, 1, 2, 2) }),
    },
    {
      name: 'latents-rows-mismatch',
      about: 'latents with 3 rows for 2 kept steps',
      code: R,
      reason: 'tensor-shape',
      bytes: v2({ latents: tensors().latents }),
    },
    {
      name: 'missing-frame-indices',
      about: 'frames without frame_indices',
      code: R,
      reason: 'missing-tensor',
      bytes: v2({ frame_indices: undefined }),
    },
    {
      name: 'missing-frames',
      about: 'frame_indices without frames',
      code: R,
      reason: 'missing-tensor',
      bytes: v2({ frames: undefined }),
    },
    {
      name: 'frame-indices-empty',
      about: 'frame_indices of length 0 (a file with video holds at least one frame)',
      code: R,
      reason: 'tensor-shape',
      bytes: v2({
        frame_indices: i32(),
        frames: { dtype: 'U8', shape: [2, 0, 1, 2, 3], data: new Uint8Array(0) },
      }),
    },
    {
      name: 'frames-f32',
      about: 'frames stored as F32 in [0, 1]',
      code: R,
      reason: 'tensor-dtype',
      bytes: v2({
        frames: { dtype: 'F32', shape: [2, 2, 1, 2, 3], data: new Float32Array(24) },
      }),
    },
    {
      name: 'frames-rgba',
      about: 'frames with 4 channels (RGBA)',
      code: R,
      reason: 'tensor-shape',
      bytes: v2({ frames: { dtype: 'U8', shape: [2, 2, 1, 2, 4], data: new Uint8Array(32) } }),
    },
    {
      name: 'frames-frame-major',
      about: 'frames as [N, G, H, W, 3] = [1, 2, …] for one frame of two samples (v2 is [G, N, …])',
      code: R,
      reason: 'tensor-shape',
      bytes: v2({
        frame_indices: i32(0),
        frames: { dtype: 'U8', shape: [1, 2, 1, 2, 3], data: new Uint8Array(12) },
      }),
    },
    {
      name: 'frames-channels-first',
      about: 'frames as [G, N, 3, H, W] (v2 is channel-last RGB)',
      code: R,
      reason: 'tensor-shape',
      bytes: v2({ frames: { dtype: 'U8', shape: [2, 2, 3, 1, 2], data: new Uint8Array(24) } }),
    },
    {
      name: 'latent-steps-not-ending-at-t',
      about: 'latent_steps [0, 1]: the final sample x_T is always kept',
      code: R,
      reason: 'latent-steps',
      bytes: v2({ latent_steps: i32(0, 1) }),
    },
    {
      name: 'latent-steps-repeat',
      about: 'latent_steps [2, 2]: not strictly increasing',
      code: R,
      reason: 'latent-steps',
      bytes: v2({ latent_steps: i32(2, 2) }),
    },
    {
      name: 'latent-steps-negative',
      about: 'latent_steps [-1, 2]',
      code: R,
      reason: 'latent-steps',
      bytes: v2({ latent_steps: i32(-1, 2) }),
    },
    {
      name: 'frame-index-past-clip',
      about: 'frame_indices [0, 3] in a 3-frame clip',
      code: R,
      reason: 'frame-indices',
      bytes: v2({ frame_indices: i32(0, 3) }),
    },
    {
      name: 'frame-indices-decreasing',
      about: 'frame_indices [2, 0]',
      code: R,
      reason: 'frame-indices',
      bytes: v2({ frame_indices: i32(2, 0) }),
    },
    {
      name: 'seed-before-indices',
      about: 'a negative seed and bad latent_steps: seed-range is checked first',
      code: R,
      reason: 'seed-range',
      bytes: v2({
        latent_steps: i32(0, 1),
        seeds: { dtype: 'I64', shape: [2], data: BigInt64Array.of(-1n, 1n) },
      }),
    },
  ];
}
