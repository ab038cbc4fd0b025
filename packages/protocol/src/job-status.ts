import { RolloutSummarySchema } from '@flowfleet/formats';
import { z } from 'zod';
import { IdSchema, TimestampSchema } from './atoms.js';
import { ErrorEnvelopeSchema } from './error-envelope.js';

/** A job's lifecycle: queued → active → completed | failed. */
export const JobStateSchema = z.enum(['queued', 'active', 'completed', 'failed']);
/** A job's lifecycle state. */
export type JobState = z.infer<typeof JobStateSchema>;

/** Denoise progress: `step` of `steps` done. */
export const JobProgressSchema = z
  .object({ step: z.int().min(0), steps: z.int().min(1) })
  .refine((p) => p.step <= p.steps, { message: 'step exceeds steps', path: ['step'] });
/** Denoise progress. */
export type JobProgress = z.infer<typeof JobProgressSchema>;

/** A lane name: `lane-<16 hex digits>`. */
export const LaneNameSchema = z
  .string()
  .regex(/^lane-[0-9a-f]{16}$/, 'a lane name is lane-<16 hex digits>');

/**
 * What every view of a job shows (its status, the listing): built by one mapping from the job's
 * BullMQ record. A job whose stored payload cannot be read is `failed` with that error's code.
 */
const jobViewShape = {
  id: IdSchema,
  lane: LaneNameSchema,
  status: JobStateSchema,
  progress: JobProgressSchema,
  /** Why it failed (failed jobs only). */
  error: ErrorEnvelopeSchema.optional(),
  /** The worker running or having run it. */
  worker: IdSchema.optional(),
  /** Attempts made so far (a retried job keeps its id and reproduces its trajectory). */
  attempts: z.int().min(0),
  createdAt: TimestampSchema,
  startedAt: TimestampSchema.optional(),
  finishedAt: TimestampSchema.optional(),
};

function failedHasError(job: { status: JobState; error?: unknown }, ctx: z.RefinementCtx): void {
  if (job.status === 'failed' && job.error === undefined) {
    ctx.addIssue({ code: 'custom', path: ['error'], message: 'a failed job has an error' });
  }
}

/** The fields every view of a job shows. */
export const JobViewSchema = z.object(jobViewShape).superRefine(failedHasError);
/** The fields every view of a job shows. */
export type JobView = z.infer<typeof JobViewSchema>;

/**
 * A job's status as `GET /v1/rollouts/:id` reports it. `summary` is present once completed,
 * `error` once failed (a job that failed an attempt but will be retried is `queued` again).
 */
export const JobStatusSchema = z
  .object({ ...jobViewShape, summary: RolloutSummarySchema.optional() })
  .superRefine((job, ctx) => {
    failedHasError(job, ctx);
    if (job.status === 'completed' && job.summary === undefined) {
      ctx.addIssue({ code: 'custom', path: ['summary'], message: 'a completed job has a summary' });
    }
  });
/** A job's status. */
export type JobStatus = z.infer<typeof JobStatusSchema>;

/** The frames a completed rollout returned, as the listing names them (the pixels are separate). */
export const ListedFramesSchema = z.strictObject({
  /** The clip frame indices the result holds (its `frame_indices`), increasing. */
  indices: z.array(z.int().min(0)).min(1),
  width: z.int().min(1),
  height: z.int().min(1),
});

/** The frames a completed rollout returned, as the listing names them. */
export type ListedFrames = z.infer<typeof ListedFramesSchema>;

/**
 * One rollout as `GET /v1/rollouts` lists it: the job view plus what the request asked for
 * (absent when the stored payload cannot be read; the job is then `failed` with that code), and
 * for a completed rollout that returned frames, which ones (`GET /v1/rollouts/:id/frames/…`
 * serves each).
 */
export const RolloutListItemSchema = z
  .object({
    ...jobViewShape,
    model: z.string().optional(),
    /** The prompt, cut to a listing's length. */
    prompt: z.string().optional(),
    groupSize: z.int().min(1).optional(),
    frames: ListedFramesSchema.optional(),
  })
  .superRefine(failedHasError);
/** One listed rollout. */
export type RolloutListItem = z.infer<typeof RolloutListItemSchema>;
