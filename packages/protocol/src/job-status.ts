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

/**
 * A job's status as the API reports it. `summary` is present once completed, `error` once failed
 * (a job that failed an attempt but will be retried is `queued` again).
 */
export const JobStatusSchema = z
  .object({
    id: IdSchema,
    lane: z.string().regex(/^lane-[0-9a-f]{16}$/, 'a lane name is lane-<16 hex digits>'),
    status: JobStateSchema,
    progress: JobProgressSchema,
    summary: RolloutSummarySchema.optional(),
    error: ErrorEnvelopeSchema.optional(),
    /** The worker running or having run it. */
    worker: IdSchema.optional(),
    /** Attempts made so far (a retried job keeps its id and reproduces its trajectory). */
    attempts: z.int().min(0),
    createdAt: TimestampSchema,
    startedAt: TimestampSchema.optional(),
    finishedAt: TimestampSchema.optional(),
  })
  .superRefine((job, ctx) => {
    if (job.status === 'completed' && job.summary === undefined) {
      ctx.addIssue({ code: 'custom', path: ['summary'], message: 'a completed job has a summary' });
    }
    if (job.status === 'failed' && job.error === undefined) {
      ctx.addIssue({ code: 'custom', path: ['error'], message: 'a failed job has an error' });
    }
  });
/** A job's status. */
export type JobStatus = z.infer<typeof JobStatusSchema>;
