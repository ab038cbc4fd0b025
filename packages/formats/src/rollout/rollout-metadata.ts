import { z } from 'zod';

/** `__metadata__.format` of a rollout file. */
export const ROLLOUT_FORMAT = 'flowfleet.rollout';
/**
 * `__metadata__.format_version` of a latents-only rollout (every trajectory latent, no frames):
 * what such a rollout has always been written as, so v1 readers keep reading it.
 */
export const ROLLOUT_FORMAT_VERSION = '1';
/** `__metadata__.format_version` of a rollout with decoded frames or a kept-steps window. */
export const ROLLOUT_FORMAT_VERSION_2 = '2';
/** The versions this code reads. */
export const ROLLOUT_FORMAT_VERSIONS: readonly RolloutFormatVersion[] = Object.freeze(['1', '2']);
/** A `format_version` this code reads. */
export type RolloutFormatVersion = '1' | '2';

/**
 * Names the summary gives the tensors and the per-attempt fields. A record's metadata may not use
 * them (not even as an added optional field), so that the summary can hold the metadata verbatim
 * beside them.
 */
export const RESERVED_SUMMARY_KEYS: readonly string[] = Object.freeze([
  'id',
  'latents',
  'logProbs',
  'seeds',
  'sigmas',
  'timesteps',
  'stepIndices',
  'worker',
  'timings',
  'captureStats',
]);

/** v2 reserves the summary names of its two added tensors as well. */
export const RESERVED_SUMMARY_KEYS_V2: readonly string[] = Object.freeze([
  ...RESERVED_SUMMARY_KEYS,
  'latentSteps',
  'frameIndices',
]);

/**
 * When classifier-free guidance runs its unconditional branch, by name: `unless-one` (every
 * scale w ≠ 1) or `above-one` (w > 1 only: diffusers' and flow_grpo's rule).
 */
export const CfgRuleSchema = z.enum(['unless-one', 'above-one']);
/** A CFG rule name. */
export type CfgRule = z.infer<typeof CfgRuleSchema>;

/** The two samplers: `sde` (FlowGRPO, with per-step log-probs) and `ode` (Euler, none). */
export const RolloutSamplerSchema = z.enum(['sde', 'ode']);

/**
 * The required metadata fields of RolloutFile v1, shared by the record schema and the summary
 * schema (which holds them verbatim).
 */
export const ROLLOUT_METADATA_FIELDS = {
  model: z.string().min(1),
  loopId: z.string().min(1),
  prompt: z.string(),
  negativePrompt: z.string(),
  sampler: RolloutSamplerSchema,
  /** Denoise steps T. */
  steps: z.int().min(1),
  /** Samples G (one seed each). */
  group: z.int().min(1),
  /** One sample's latent shape (rank ≥ 1, e.g. [C, F, H, W] for a video DiT). */
  latentDims: z.array(z.int().min(1)).min(1),
  noiseLevel: z.number(),
  guidanceScale: z.number(),
  /** Shift of the linear-shift schedule; null when the request carried explicit sigmas. */
  shift: z.number().nullable(),
  /** The weight version of every component the rollout ran on. */
  weightsVersions: z.record(z.string().min(1), z.int().min(0)),
  /** The backend that built each component (`ort-cpu`, `cpu-reference`, …). */
  backend: z.record(z.string().min(1), z.string().min(1)),
  platform: z.looseObject({ device: z.string().min(1), arch: z.string().min(1) }),
  /** Names of the interceptors installed for the rollout. */
  interceptors: z.array(z.string()),
  /**
   * When CFG ran its unconditional branch: `unless-one` (every w ≠ 1) or `above-one` (w > 1
   * only). Optional: absent means `unless-one` (files written before the key existed).
   */
  cfgRule: CfgRuleSchema.optional(),
};

/**
 * The JSON object in `__metadata__.rollout`: the required fields are strict (type, range);
 * `cfgRule` is optional; any other key is an added optional field of a later writer and is
 * preserved as it is (format additions land this way without a version bump). Keys the summary
 * reserves are refused. Everything here is a pure function of (job, weights, backend): no
 * timings, capture counters or worker ids.
 */
export const RolloutMetadataSchema = z
  .looseObject(ROLLOUT_METADATA_FIELDS)
  .superRefine((metadata, ctx) => {
    for (const key of RESERVED_SUMMARY_KEYS) {
      if (Object.hasOwn(metadata, key)) {
        ctx.addIssue({ code: 'custom', path: [key], message: 'is a name the summary reserves' });
      }
    }
  });
/** The metadata record of a rollout file (required fields plus any added ones). */
export type RolloutMetadata = z.infer<typeof RolloutMetadataSchema>;

/**
 * v2's geometry of one sample's decoded clip: `frames` frames of `height` × `width` RGB pixels
 * (the file holds a subset of the frames, `frame_indices`).
 */
export const RolloutVideoSchema = z.strictObject({
  frames: z.int().min(1),
  height: z.int().min(1),
  width: z.int().min(1),
});
/** The geometry of one sample's decoded clip. */
export type RolloutVideo = z.infer<typeof RolloutVideoSchema>;

/**
 * The record of a RolloutFile v2: v1's, plus the required `video` (the decoded clip's geometry,
 * or null when the file holds no frames); `latentSteps` and `frameIndices` are reserved too.
 */
export const RolloutMetadataV2Schema = z
  .looseObject({ ...ROLLOUT_METADATA_FIELDS, video: RolloutVideoSchema.nullable() })
  .superRefine((metadata, ctx) => {
    for (const key of RESERVED_SUMMARY_KEYS_V2) {
      if (Object.hasOwn(metadata, key)) {
        ctx.addIssue({ code: 'custom', path: [key], message: 'is a name the summary reserves' });
      }
    }
  });
