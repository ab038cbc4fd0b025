import { CfgRuleSchema } from '@flowfleet/formats';
import { NOISE_LEVEL_RANGE, SHIFT_RANGE } from '@flowfleet/numerics';
import { z } from 'zod';
import { AdapterSchema, MinArchSchema } from './arch.js';
import { DEVICES, DeviceSchema, ModelIdSchema, SamplerSchema, SeedSchema } from './atoms.js';
import { DEFAULT_LIMITS, type Limits } from './limits.js';
import { WeightRequirementsSchema } from './weight-requirement.js';

/** What a request that leaves `waitForCapacity` out gets. */
export const DEFAULT_WAIT_FOR_CAPACITY = false;

/** The latent shape of one sample, in latent units (after the VAE, before patchify). */
export const LatentShapeSchema = z.strictObject({
  frames: z.int().min(1),
  height: z.int().min(1),
  width: z.int().min(1),
});
/** The latent shape of one sample. */
export type LatentShape = z.infer<typeof LatentShapeSchema>;

const ADAPTER_DESCRIPTION =
  'Which adapters the job accepts: `any` (default), `hardware` (no software adapter: a real GPU ' +
  'or the CPU itself; excludes webgpu workers whose arch is `software`), or `software` (only ' +
  'webgpu workers on an emulated adapter; needs `webgpu` among the devices).';

/**
 * Where a job may run: allowed devices (default: all), a minimum arch per device, and which
 * adapters (hardware, software) it accepts. `adapter: 'software'` without `webgpu` among the
 * devices could never run and is refused.
 */
export const ConstraintsSchema = z
  .strictObject({
    devices: z
      .array(DeviceSchema)
      .min(1)
      .default(() => [...DEVICES]),
    minArch: MinArchSchema.prefault({}),
    adapter: AdapterSchema.default('any').meta({ description: ADAPTER_DESCRIPTION }),
  })
  .superRefine((constraints, ctx) => {
    if (constraints.adapter === 'software' && !constraints.devices.includes('webgpu')) {
      ctx.addIssue({
        code: 'custom',
        path: ['adapter'],
        message: "adapter 'software' needs 'webgpu' among the devices (only webgpu has them)",
      });
    }
  });
/** Where a job may run. */
export type Constraints = z.infer<typeof ConstraintsSchema>;

const DECODE_FRAMES_DESCRIPTION =
  "Which frames of each sample's decoded clip come back, as uint8 RGB [G, N, H, W, 3] in a " +
  'RolloutFile v2: `none` (latents only, a v1 file as before; the default of every shipped card), `first` (frame 0), ' +
  '`{"every": k}` (frames 0, k, 2k, …) or `all`. Anything but `none` needs a card with a frame ' +
  'decoder (a VAE); the worker decodes the final latents up to the last frame asked for.';
const KEEP_LATENTS_DESCRIPTION =
  'Which trajectory latents come back: `all` (x_0 … x_T; the default of every shipped card) or ' +
  '`{"fromStep": a, "steps": n}`: the inputs and outputs of steps a … a + n − 1 (x_a … x_{a+n}) ' +
  'plus the final x_T — the steps a trainer trains on (flow_grpo: a fraction of them). ' +
  "a + n must not exceed the rollout's steps (the card checks). Log-probs of every step come back either way.";

/** Which decoded frames a rollout returns (see DECODE_FRAMES_DESCRIPTION). */
export const FrameSelectionSchema = z
  .union([z.enum(['none', 'first', 'all']), z.strictObject({ every: z.int().min(1) })])
  .meta({ description: DECODE_FRAMES_DESCRIPTION });
/** Which trajectory latents a rollout keeps (see KEEP_LATENTS_DESCRIPTION). */
export const LatentKeepSchema = z
  .union([z.literal('all'), z.strictObject({ fromStep: z.int().min(0), steps: z.int().min(1) })])
  .meta({ description: KEEP_LATENTS_DESCRIPTION });

/** The latent elements a whole group holds: seeds × frames × height × width. */
export function groupLatentElements(groupSize: number, shape: LatentShape): number {
  return groupSize * shape.frames * shape.height * shape.width;
}

// The bounds come from the float32 numerics of the FlowGRPO step (numerics' sde-schedule-bounds):
// the coordinator README's "Request bounds" derives them.
const NOISE_LEVEL_DESCRIPTION =
  'FlowGRPO noise level a, in [2^-11, 2]. At σ = 1 the step noise is e = a, which must stay ' +
  'above 2^-11 (what float32 latents resolve), and the mean is (1 − a²/2)·x + …, which a ≤ 2 ' +
  'keeps from amplifying x. For the SDE sampler the model card also checks every step of the ' +
  'schedule: e_i ≥ 2^-11 and a²·(σ_i − σ_{i+1}) ≤ 4·(1 − σ̃_i), σ̃_i = σ_1 when σ_i = 1 else σ_i.';
const SHIFT_DESCRIPTION =
  'Shift of the linear-shift schedule, in [2^-12, 100] (below it no SDE schedule of ≥ 2 steps ' +
  'keeps its last step above the noise floor, and the sigmas crowd into the subnormals).';
const SIGMAS_DESCRIPTION =
  'An explicit schedule of steps + 1 entries (`steps`, when also given, must agree). The model ' +
  "card's rules decide the rest (for the shipped cards: finite, σ_0 in (0, 1], strictly " +
  'decreasing, σ_T ≥ 0 — a trajectory window may end above 0 — and for the SDE sampler every ' +
  'step within the per-step bounds of noiseLevel).';
const EMBEDS_DESCRIPTION =
  'A text embedding by reference: the sha256 of an uploaded safetensors blob (`PUT /v1/blobs`) ' +
  "holding one tensor [L, dim] (F32, BF16 or F16), L ≤ the card's text length = the true token " +
  'count. Only for a card whose text input is embeddings; the edge checks the blob and its header.';

/** A text embedding by reference: an uploaded safetensors blob's sha256. */
export const TextEmbedsRefSchema = z.strictObject({
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 is 64 lowercase hex digits'),
});

/**
 * Each field with the fleet's bounds. The sampling fields a client may leave out stay out: the
 * model card fills them and checks every sampling rule (`resolveRequest`), and the coordinator
 * stores the card's resolved values in the job — the schema holds no sampling defaults or rules
 * of its own.
 */
function requestFields(limits: Limits) {
  return {
    model: ModelIdSchema,
    prompt: z.string().min(1).max(limits.maxPromptChars),
    negativePrompt: z.string().max(limits.maxPromptChars).meta({
      description:
        "The unconditional branch's prompt of classifier-free guidance (default empty, as flow_grpo's is when it passes none).",
    }),
    promptEmbeds: TextEmbedsRefSchema.meta({
      description: `The prompt's embedding. ${EMBEDS_DESCRIPTION}`,
    }),
    negativePromptEmbeds: TextEmbedsRefSchema.meta({
      description: `The negative prompt's embedding (needed when CFG runs). ${EMBEDS_DESCRIPTION}`,
    }),
    seeds: z
      .array(SeedSchema)
      .min(1)
      .max(limits.maxGroupSize)
      .refine((seeds) => new Set(seeds).size === seeds.length, 'seeds must be distinct'),
    steps: z.int().min(1).max(limits.maxSteps),
    sampler: SamplerSchema,
    guidanceScale: z.number().min(0).max(100).meta({
      description:
        'CFG scale w in [0, 100]; whether it runs an unconditional branch is up to `cfgRule`.',
    }),
    cfgRule: CfgRuleSchema.meta({
      description:
        'When CFG runs its unconditional branch: `unless-one` for every w ≠ 1 (the default), `above-one` only for w > 1 (diffusers and flow_grpo).',
    }),
    noiseLevel: z
      .number()
      .min(NOISE_LEVEL_RANGE.min)
      .max(NOISE_LEVEL_RANGE.max)
      .meta({ description: NOISE_LEVEL_DESCRIPTION }),
    shift: z
      .number()
      .min(SHIFT_RANGE.min)
      .max(SHIFT_RANGE.max)
      .meta({ description: SHIFT_DESCRIPTION }),
    shape: LatentShapeSchema.meta({
      description:
        "One sample's latent; the model card may require more (e.g. multiples of its DiT's patch).",
    }),
    sigmas: z
      .array(z.number())
      .min(2)
      .max(limits.maxSteps + 1)
      .meta({ description: SIGMAS_DESCRIPTION })
      .optional(),
    weights: WeightRequirementsSchema,
    constraints: z.strictObject({
      devices: z.array(DeviceSchema).min(1),
      minArch: MinArchSchema,
      adapter: AdapterSchema,
    }),
    waitForCapacity: z.boolean(),
    decodeFrames: FrameSelectionSchema,
    keepLatents: LatentKeepSchema,
  };
}

const CARD_DEFAULT = "default: the model card's";

/**
 * The rollout request schema under `limits`: the wire form of the request, with the fleet's
 * bounds (prompt length, group size, steps, the group's latent when the shape is given) and
 * unknown keys rejected at every level. The sampling fields a client leaves out (`steps`,
 * `sampler`, `guidanceScale`, `cfgRule`, `noiseLevel`, `shift`, `shape`, `negativePrompt`) stay
 * out: the model card owns their defaults and every sampling rule. The coordinator stores the
 * card's resolved request, whose every field is set, and a worker parses it with this same schema.
 */
export function rolloutRequestSchema(limits: Limits = DEFAULT_LIMITS) {
  const fields = requestFields(limits);
  const byCard = <T extends z.ZodType>(schema: T) =>
    schema
      .optional()
      .meta({ description: `${schema.meta()?.description ?? ''} (${CARD_DEFAULT})`.trim() });
  return z
    .strictObject({
      ...fields,
      steps: byCard(fields.steps),
      sampler: byCard(fields.sampler),
      guidanceScale: byCard(fields.guidanceScale),
      noiseLevel: byCard(fields.noiseLevel),
      shift: byCard(fields.shift),
      shape: byCard(fields.shape),
      negativePrompt: byCard(fields.negativePrompt),
      cfgRule: byCard(fields.cfgRule),
      promptEmbeds: fields.promptEmbeds.optional(),
      negativePromptEmbeds: fields.negativePromptEmbeds.optional(),
      weights: fields.weights.prefault({}),
      constraints: ConstraintsSchema.prefault({}),
      waitForCapacity: fields.waitForCapacity.default(DEFAULT_WAIT_FOR_CAPACITY),
      decodeFrames: byCard(fields.decodeFrames),
      keepLatents: byCard(fields.keepLatents),
    })
    .superRefine((request, ctx) => {
      const issue = latentLimitIssue(request.seeds.length, request.shape, limits);
      if (issue !== undefined) ctx.addIssue({ code: 'custom', path: ['shape'], message: issue });
      if (
        request.sigmas !== undefined &&
        request.steps !== undefined &&
        request.sigmas.length !== request.steps + 1
      ) {
        ctx.addIssue({
          code: 'custom',
          path: ['sigmas'],
          message: `sigmas needs steps + 1 = ${request.steps + 1} entries, got ${request.sigmas.length}`,
        });
      }
    });
}

/**
 * Why a group of `groupSize` samples of `shape` is over `limits.maxLatentElements`, or undefined
 * when it is not (or no shape is given yet: the edge checks again once the card filled it).
 */
export function latentLimitIssue(
  groupSize: number,
  shape: LatentShape | undefined,
  limits: Pick<Limits, 'maxLatentElements'>,
): string | undefined {
  if (shape === undefined) return undefined;
  const elements = groupLatentElements(groupSize, shape);
  if (elements <= limits.maxLatentElements) return undefined;
  return `the group's latent is ${elements} elements (${groupSize} seeds × ${shape.frames}×${shape.height}×${shape.width}); the limit is ${limits.maxLatentElements}`;
}

/** The rollout request schema under the default limits. */
export const RolloutRequestSchema = rolloutRequestSchema(DEFAULT_LIMITS);
/** A parsed rollout request (the sampling fields the card fills may be absent). */
export type RolloutRequest = z.output<typeof RolloutRequestSchema>;
/** A rollout request as a client may send it. */
export type RolloutRequestInput = z.input<typeof RolloutRequestSchema>;
