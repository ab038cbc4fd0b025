import { z } from 'zod';
import {
  ComponentIdSchema,
  IdSchema,
  ModelIdSchema,
  SamplerSchema,
  SeedSchema,
  WeightVersionSchema,
} from './atoms.js';
import { LatentShapeSchema } from './rollout-request.js';
import { PlatformFactsSchema } from './worker-manifest.js';

const Count = z.int().min(0);

/** The graph capturer's counters over one rollout. */
export const CaptureStatsSchema = z.object({
  captures: Count,
  replays: Count,
  eagerBreaks: Count,
  evictions: Count,
  liveGraphs: Count,
  bytesHeld: Count,
});
/** The graph capturer's counters. */
export type CaptureStats = z.infer<typeof CaptureStatsSchema>;

/**
 * The JSON summary of a finished rollout: everything a trainer needs to recompute it (DESIGN §4),
 * beside the tensors in the result's safetensors. `timesteps[i] = 1000·sigmas[i]` for i = 0..steps;
 * `logProbs[sample][step]` has one entry per step for `sde` and none for `ode`.
 */
export const RolloutSummarySchema = z
  .object({
    id: IdSchema,
    model: ModelIdSchema,
    prompt: z.string(),
    seeds: z.array(SeedSchema).min(1),
    steps: z.int().min(1),
    sampler: SamplerSchema,
    guidanceScale: z.number(),
    noiseLevel: z.number(),
    shift: z.number(),
    shape: LatentShapeSchema,
    sigmas: z.array(z.number()),
    timesteps: z.array(z.number()),
    logProbs: z.array(z.array(z.number())),
    /** The weight version each component ran on. */
    weights: z.record(ComponentIdSchema, WeightVersionSchema),
    /** The worker id that ran it. */
    worker: IdSchema,
    platform: PlatformFactsSchema,
    /** The backend that ran the forward passes (`cpu`, `ort-cpu`, …). */
    backend: z.string().min(1),
    timings: z.object({ totalMs: z.number().min(0), perStepMs: z.array(z.number().min(0)) }),
    captureStats: CaptureStatsSchema.optional(),
  })
  .superRefine((summary, ctx) => {
    const { steps } = summary;
    if (summary.sigmas.length !== steps + 1) {
      ctx.addIssue({ code: 'custom', path: ['sigmas'], message: `needs ${steps + 1} entries` });
    }
    if (summary.timesteps.length !== steps + 1) {
      ctx.addIssue({ code: 'custom', path: ['timesteps'], message: `needs ${steps + 1} entries` });
    }
    if (summary.logProbs.length !== summary.seeds.length) {
      ctx.addIssue({ code: 'custom', path: ['logProbs'], message: 'needs one row per seed' });
    }
    const perSample = summary.sampler === 'sde' ? steps : 0;
    summary.logProbs.forEach((row, i) => {
      if (row.length !== perSample) {
        ctx.addIssue({
          code: 'custom',
          path: ['logProbs', i],
          message: `needs ${perSample} entries for sampler '${summary.sampler}'`,
        });
      }
    });
    if (summary.timings.perStepMs.length !== steps) {
      ctx.addIssue({
        code: 'custom',
        path: ['timings', 'perStepMs'],
        message: `needs ${steps} entries`,
      });
    }
  });
/** The JSON summary of a finished rollout. */
export type RolloutSummary = z.infer<typeof RolloutSummarySchema>;
