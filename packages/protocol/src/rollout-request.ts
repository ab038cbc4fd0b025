import { CfgRuleSchema } from '@flowfleet/formats';
import { NOISE_LEVEL_RANGE, SHIFT_RANGE } from '@flowfleet/numerics';
import { z } from 'zod';
import { AdapterSchema, MinArchSchema } from './arch.js';
import { DEVICES, DeviceSchema, ModelIdSchema, SamplerSchema, SeedSchema } from './atoms.js';
import { DEFAULT_LIMITS, type Limits } from './limits.js';
import { WeightRequirementsSchema } from './weight-requirement.js';

/** Steps used when a request names neither `steps` nor `sigmas` and no model card says. */
export const DEFAULT_STEPS = 10;

/** What a request's model fills in for the sampling fields a client leaves out. */
export interface RolloutRequestDefaults {
  readonly steps: number;
  readonly sampler: 'sde' | 'ode';
  readonly guidanceScale: number;
  readonly noiseLevel: number;
  readonly shift: number;
  readonly shape: { readonly frames: number; readonly height: number; readonly width: number };
}

/**
 * The model's defaults for a request, by model id (the coordinator answers from the model cards);
 * undefined for a model it does not know (such a request is refused after parsing).
 */
export type RolloutDefaultsFor = (model: string) => RolloutRequestDefaults | undefined;

/**
 * Sampling defaults for a model nobody described (FlowGRPO-style rollouts: SDE with CFG): what
 * the schema fills when it is given no `defaultsFor`, e.g. in tests and tools.
 */
export const ROLLOUT_DEFAULTS = Object.freeze({
  steps: DEFAULT_STEPS,
  sampler: 'sde' as const,
  guidanceScale: 4.5,
  noiseLevel: 0.7,
  shift: 3,
  shape: Object.freeze({ frames: 4, height: 16, width: 16 }),
  waitForCapacity: false,
});

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
  'RolloutFile v2: `none` (default: latents only, a v1 file as before), `first` (frame 0), ' +
  '`{"every": k}` (frames 0, k, 2k, …) or `all`. Anything but `none` needs a card with a frame ' +
  'decoder (a VAE); the worker decodes the final latents up to the last frame asked for.';
const KEEP_LATENTS_DESCRIPTION =
  'Which trajectory latents come back: `all` (default: x_0 … x_T) or ' +
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
  'An explicit schedule: steps + 1 finite entries, σ_0 ≤ 1, strictly decreasing, ending at 0. ' +
  'For the SDE sampler every step must pass the per-step bounds of noiseLevel.';

/** Each field as parsing leaves it: no defaults (the output stage re-checks filled-in values). */
function resolvedFields(limits: Limits) {
  return {
    model: ModelIdSchema,
    prompt: z.string().min(1).max(limits.maxPromptChars),
    negativePrompt: z.string().max(limits.maxPromptChars).meta({
      description:
        "The unconditional branch's prompt of classifier-free guidance (default empty, as flow_grpo's is when it passes none).",
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
 * The fields as a client may send them: every one but model, prompt and seeds may be left out;
 * the sampling fields then take the model card's defaults.
 */
function inputFields(limits: Limits) {
  const fields = resolvedFields(limits);
  const byCard = <T extends z.ZodType>(schema: T) =>
    schema
      .optional()
      .meta({ description: `${schema.meta()?.description ?? ''} (${CARD_DEFAULT})`.trim() });
  return {
    ...fields,
    steps: byCard(fields.steps),
    sampler: byCard(fields.sampler),
    guidanceScale: byCard(fields.guidanceScale),
    noiseLevel: byCard(fields.noiseLevel),
    shift: byCard(fields.shift),
    shape: byCard(fields.shape),
    negativePrompt: fields.negativePrompt.default(''),
    cfgRule: fields.cfgRule.default('unless-one'),
    weights: fields.weights.prefault({}),
    constraints: ConstraintsSchema.prefault({}),
    waitForCapacity: fields.waitForCapacity.default(ROLLOUT_DEFAULTS.waitForCapacity),
    decodeFrames: fields.decodeFrames.default('none'),
    keepLatents: fields.keepLatents.default('all'),
  };
}

/**
 * The rollout request schema under `limits`. Parsing applies every default — the sampling ones
 * (`steps`, `sampler`, `guidanceScale`, `noiseLevel`, `shift`, `shape`) from `defaultsFor(model)`,
 * the model card's, or {@link ROLLOUT_DEFAULTS} without one — so a parsed request states every
 * value it runs with; unknown keys are rejected at every level. `steps` defaults to
 * `sigmas.length − 1` when an explicit sigma table is given. An explicit table must have
 * `steps + 1` entries, start at or below 1, end at 0 and strictly decrease. The whole group's
 * latent size is bounded by `limits.maxLatentElements`.
 */
export function rolloutRequestSchema(
  limits: Limits = DEFAULT_LIMITS,
  defaultsFor: RolloutDefaultsFor = () => undefined,
) {
  // Two stages so that both JSON-Schema views stay exact: the input view shows the defaults and
  // `steps` optional, the output view shows every field filled in (a bare `.transform` has no
  // output JSON Schema).
  const input = z.strictObject(inputFields(limits));
  const output = z.strictObject(resolvedFields(limits)).superRefine((request, ctx) => {
    const elements = groupLatentElements(request.seeds.length, request.shape);
    if (elements > limits.maxLatentElements) {
      ctx.addIssue({
        code: 'custom',
        path: ['shape'],
        message: `the group's latent is ${elements} elements (${request.seeds.length} seeds × ${request.shape.frames}×${request.shape.height}×${request.shape.width}); the limit is ${limits.maxLatentElements}`,
      });
    }
    if (request.sigmas !== undefined) checkSigmas(request.sigmas, request.steps, ctx);
  });
  return input
    .pipe(
      z.transform((request) => {
        const defaults = defaultsFor(request.model) ?? ROLLOUT_DEFAULTS;
        return {
          ...request,
          steps: request.steps ?? (request.sigmas ? request.sigmas.length - 1 : defaults.steps),
          sampler: request.sampler ?? defaults.sampler,
          guidanceScale: request.guidanceScale ?? defaults.guidanceScale,
          noiseLevel: request.noiseLevel ?? defaults.noiseLevel,
          shift: request.shift ?? defaults.shift,
          shape: request.shape ?? { ...defaults.shape },
        };
      }),
    )
    .pipe(output);
}

function checkSigmas(sigmas: readonly number[], steps: number, ctx: z.RefinementCtx): void {
  const issue = (message: string, index?: number): void =>
    ctx.addIssue({
      code: 'custom',
      path: index === undefined ? ['sigmas'] : ['sigmas', index],
      message,
    });
  if (sigmas.length !== steps + 1) {
    issue(`sigmas needs steps + 1 = ${steps + 1} entries, got ${sigmas.length}`);
  }
  if ((sigmas[0] ?? 0) > 1) issue('the first sigma must be at most 1', 0);
  if (sigmas.at(-1) !== 0) issue('the last sigma must be 0', sigmas.length - 1);
  for (let i = 1; i < sigmas.length; i++) {
    if (!((sigmas[i] ?? 0) < (sigmas[i - 1] ?? 0))) {
      issue('sigmas must strictly decrease', i);
      break;
    }
  }
}

/** The rollout request schema under the default limits. */
export const RolloutRequestSchema = rolloutRequestSchema(DEFAULT_LIMITS);
/** A parsed rollout request: every default filled in. */
export type RolloutRequest = z.output<typeof RolloutRequestSchema>;
/** A rollout request as a client may send it (defaults optional). */
export type RolloutRequestInput = z.input<typeof RolloutRequestSchema>;
