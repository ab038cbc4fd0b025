import { z } from 'zod';
import { firstIssue, rolloutInvalid } from './rollout-error.js';
import { ROLLOUT_METADATA_FIELDS, RolloutVideoSchema } from './rollout-metadata.js';
import { everyLatentStep, rolloutVideoOf, type RolloutRecord } from './rollout-record.js';
import { rolloutFormatVersionOf } from './parse-rollout-metadata.js';

const Count = z.int().min(0);
const Ms = z.number().min(0);

/** The graph capturer's counters over one rollout (per attempt: summary only). */
export const CaptureStatsSchema = z.object({
  captures: Count,
  replays: Count,
  eagerBreaks: Count,
  evictions: Count,
  liveGraphs: Count,
  bytesHeld: Count,
});
/** The graph capturer's counters over one rollout. */
export type CaptureStats = z.infer<typeof CaptureStatsSchema>;

/** Where a rollout's wall time went (per attempt: summary only). */
export const RolloutTimingsSchema = z.object({
  totalMs: Ms,
  encodeMs: Ms,
  denoiseMs: Ms,
  /** Capture cost (graph/session specialisation) paid by this rollout. */
  captureMs: Ms,
  /** Decoding the requested frames (RolloutFile v2); absent from summaries written before. */
  decodeMs: Ms.optional(),
  /** Wall time of each denoise step, in order: T entries. */
  stepMs: z.array(Ms),
});
/** Where a rollout's wall time went. */
export type RolloutTimings = z.infer<typeof RolloutTimingsSchema>;

/**
 * The JSON summary of a finished rollout (RolloutFile v1 § Summary): the job id, the record's
 * metadata verbatim (added optional fields included), the record's small tensors as JSON with
 * the file's layouts and lengths — `seeds` [G], `sigmas` [T+1], `timesteps` [T], `stepIndices`
 * [T], `logProbs` [T][G] (step-major, as `log_probs`) or null for `ode` — and the fields that
 * vary per attempt, which the file never holds: `worker`, `timings`, `captureStats`.
 */
export const RolloutSummarySchema = z
  .looseObject({
    id: z.string().min(1),
    ...ROLLOUT_METADATA_FIELDS,
    seeds: z.array(z.int().min(0)).min(1),
    sigmas: z.array(z.number()),
    timesteps: z.array(z.number()),
    stepIndices: z.array(z.int()),
    logProbs: z.array(z.array(z.number())).nullable(),
    /** v2: the decoded clip's geometry, or null when no frames were returned. */
    video: RolloutVideoSchema.nullable().optional(),
    /** v2: the step t of each kept latent row (ends at T). */
    latentSteps: z.array(z.int().min(0)).min(1).optional(),
    /** v2: the clip frames the file holds, or null when none. */
    frameIndices: z.array(z.int().min(0)).min(1).nullable().optional(),
    worker: z.string().min(1),
    timings: RolloutTimingsSchema,
    captureStats: CaptureStatsSchema,
  })
  .superRefine((summary, ctx) => {
    const { steps: t, group: g } = summary;
    const lengths: [string, number, number][] = [
      ['seeds', summary.seeds.length, g],
      ['sigmas', summary.sigmas.length, t + 1],
      ['timesteps', summary.timesteps.length, t],
      ['stepIndices', summary.stepIndices.length, t],
    ];
    for (const [key, actual, expected] of lengths) {
      if (actual !== expected) {
        ctx.addIssue({ code: 'custom', path: [key], message: `needs ${expected} entries` });
      }
    }
    checkV2Fields(summary, ctx);
    if (summary.timings.stepMs.length !== t) {
      ctx.addIssue({ code: 'custom', path: ['timings', 'stepMs'], message: `needs ${t} entries` });
    }
    if ((summary.logProbs === null) !== (summary.sampler === 'ode')) {
      ctx.addIssue({
        code: 'custom',
        path: ['logProbs'],
        message: summary.sampler === 'ode' ? 'is null for ode' : 'is [T][G] for sde',
      });
    } else if (summary.logProbs !== null) {
      if (summary.logProbs.length !== t) {
        ctx.addIssue({ code: 'custom', path: ['logProbs'], message: `needs ${t} rows` });
      }
      summary.logProbs.forEach((row, step) => {
        if (row.length !== g) {
          ctx.addIssue({ code: 'custom', path: ['logProbs', step], message: `needs ${g} entries` });
        }
      });
    }
  });
function checkV2Fields(
  summary: {
    steps: number;
    video?: unknown;
    latentSteps?: number[] | undefined;
    frameIndices?: number[] | null | undefined;
  },
  ctx: z.RefinementCtx,
): void {
  const v2 = summary.video !== undefined;
  const issue = (path: string, message: string) =>
    ctx.addIssue({ code: 'custom', path: [path], message });
  if (!v2) {
    if (summary.latentSteps !== undefined) issue('latentSteps', 'is v2 only (with video)');
    if (summary.frameIndices !== undefined) issue('frameIndices', 'is v2 only (with video)');
    return;
  }
  const steps = summary.latentSteps;
  if (steps === undefined) issue('latentSteps', 'is required with video');
  else if (steps[steps.length - 1] !== summary.steps) issue('latentSteps', 'must end at T');
  if (summary.frameIndices === undefined) issue('frameIndices', 'is required with video');
  else if ((summary.frameIndices === null) !== (summary.video === null)) {
    issue('frameIndices', 'is null exactly when video is null');
  }
}

/** The JSON summary of a finished rollout. */
export type RolloutSummary = z.infer<typeof RolloutSummarySchema>;

/** The per-attempt fields of a summary: who ran it, how long it took, what it captured. */
export interface RolloutAttempt {
  readonly worker: string;
  readonly timings: RolloutTimings;
  readonly captureStats: CaptureStats;
}

/**
 * The part of the summary a record determines: its metadata verbatim plus the small tensors as
 * JSON arrays (`logProbs` as T rows of G; v2 adds `latentSteps` and `frameIndices`, never the
 * frames or latents). What a conforming reader must derive from a file.
 */
export function recordSummaryFields(record: RolloutRecord): Record<string, unknown> {
  const { metadata, logProbs } = record;
  const { steps: t, group: g } = metadata;
  const v2 =
    rolloutFormatVersionOf(metadata) === '2'
      ? {
          latentSteps: Array.from(record.latentSteps ?? everyLatentStep(t)),
          frameIndices:
            rolloutVideoOf(metadata) === null || !record.frameIndices
              ? null
              : Array.from(record.frameIndices),
        }
      : {};
  return {
    ...v2,
    ...metadata,
    seeds: [...record.seeds],
    sigmas: Array.from(record.sigmas),
    timesteps: Array.from(record.timesteps),
    stepIndices: Array.from(record.stepIndices),
    logProbs:
      logProbs === null
        ? null
        : Array.from({ length: t }, (_, step) =>
            Array.from(logProbs.subarray(step * g, step * g + g)),
          ),
  };
}

/**
 * The summary of job `id`, derived from its record (the same layouts and lengths as the file)
 * plus the attempt's fields, and checked against `RolloutSummarySchema` before anyone uploads it.
 * @throws FMT_ROLLOUT_INVALID summary-schema (with `details.path`)
 */
export function summarizeRollout(
  id: string,
  record: RolloutRecord,
  attempt: RolloutAttempt,
): RolloutSummary {
  const { timings, captureStats: stats } = attempt;
  const summary = {
    id,
    ...recordSummaryFields(record),
    worker: attempt.worker,
    timings: {
      totalMs: timings.totalMs,
      encodeMs: timings.encodeMs,
      denoiseMs: timings.denoiseMs,
      captureMs: timings.captureMs,
      ...(timings.decodeMs === undefined ? {} : { decodeMs: timings.decodeMs }),
      stepMs: [...timings.stepMs],
    },
    captureStats: {
      captures: stats.captures,
      replays: stats.replays,
      eagerBreaks: stats.eagerBreaks,
      evictions: stats.evictions,
      liveGraphs: stats.liveGraphs,
      bytesHeld: stats.bytesHeld,
    },
  };
  const parsed = RolloutSummarySchema.safeParse(summary);
  if (parsed.success) return parsed.data;
  const { path, message } = firstIssue(parsed.error.issues);
  throw rolloutInvalid('summary-schema', `summary ${path}: ${message}`, { path });
}
