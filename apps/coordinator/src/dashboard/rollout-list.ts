import {
  ErrorEnvelopeSchema,
  IdSchema,
  JobProgressSchema,
  JobStateSchema,
  RolloutJobSchema,
  TimestampSchema,
  type JobProgress,
  type JobState,
} from '@flowfleet/protocol';
import type { Job, JobType } from 'bullmq';
import type { Logger } from 'pino';
import { z } from 'zod';
import { errorFromFailedReason } from '../job-status-reader.js';
import type { LaneQueues } from '../lane-queues.js';
import type { LaneRegistry } from '../lane-registry.js';

/** Prompts are listed cut to this many characters (the full request is on the job). */
export const LISTED_PROMPT_CHARS = 120;

/** `GET /v1/rollouts` query. */
export const RolloutListQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

/** One rollout as the recent-rollouts listing shows it (lighter than a JobStatus: no summary). */
export const RolloutListItemSchema = z.object({
  id: IdSchema,
  lane: z.string().regex(/^lane-[0-9a-f]{16}$/),
  status: JobStateSchema,
  progress: JobProgressSchema,
  model: z.string(),
  /** The prompt, cut to LISTED_PROMPT_CHARS. */
  prompt: z.string(),
  groupSize: z.int().min(1),
  attempts: z.int().min(0),
  createdAt: TimestampSchema,
  startedAt: TimestampSchema.optional(),
  finishedAt: TimestampSchema.optional(),
  /** The worker running or having run it. */
  worker: z.string().optional(),
  /** Why it failed (failed jobs only). */
  error: ErrorEnvelopeSchema.optional(),
});
/** One listed rollout. */
export type RolloutListItem = z.infer<typeof RolloutListItemSchema>;

/** `GET /v1/rollouts` answer: newest first. */
export const RolloutListSchema = z.object({ rollouts: z.array(RolloutListItemSchema) });

/** BullMQ states read per listed status (a retried job waits in `delayed`: `queued`). */
const STATE_GROUPS: readonly (readonly [JobState, JobType[]])[] = [
  ['active', ['active']],
  ['queued', ['waiting', 'prioritized', 'delayed']],
  ['completed', ['completed']],
  ['failed', ['failed']],
];

/** Later lifecycle states rank higher. */
const STATE_RANK: Readonly<Record<JobState, number>> = {
  queued: 0,
  active: 1,
  completed: 2,
  failed: 2,
};

/** What the listing reads from. */
export interface RolloutListContext {
  readonly lanes: Pick<LaneRegistry, 'list'>;
  readonly queues: Pick<LaneQueues, 'get'>;
  readonly logger: Logger;
}

function iso(epochMs: number | undefined): string | undefined {
  return epochMs === undefined || epochMs === 0 ? undefined : new Date(epochMs).toISOString();
}

function itemOf(job: Job, status: JobState, logger: Logger): RolloutListItem | undefined {
  // Redis data is untrusted: a payload that fails its schema is left out, not shown half-read.
  const parsed = RolloutJobSchema.safeParse(job.data);
  if (!parsed.success) {
    logger.warn({ jobId: job.id, issues: parsed.error.issues }, 'listing skips a malformed job');
    return undefined;
  }
  const { request, lane, id } = parsed.data;
  const steps = request.steps;
  const reported = JobProgressSchema.safeParse(job.progress);
  const progress: JobProgress =
    status === 'completed'
      ? { step: steps, steps }
      : reported.success
        ? reported.data
        : { step: 0, steps };
  const startedAt = iso(job.processedOn);
  const finishedAt =
    status === 'completed' || status === 'failed' ? iso(job.finishedOn) : undefined;
  return {
    id,
    lane,
    status,
    progress,
    model: request.model,
    prompt: request.prompt.slice(0, LISTED_PROMPT_CHARS),
    groupSize: request.seeds.length,
    attempts: job.attemptsMade,
    createdAt: new Date(job.timestamp).toISOString(),
    ...(startedAt !== undefined ? { startedAt } : {}),
    ...(finishedAt !== undefined ? { finishedAt } : {}),
    ...(job.processedBy !== undefined && job.processedBy !== '' ? { worker: job.processedBy } : {}),
    ...(status === 'failed' ? { error: errorFromFailedReason(job.failedReason) } : {}),
  };
}

/**
 * The `limit` most recently created rollouts across every recorded lane, newest first, with their
 * status and step progress. Reads at most `limit` jobs per lane and BullMQ state.
 */
export async function listRecentRollouts(
  context: RolloutListContext,
  limit: number,
): Promise<RolloutListItem[]> {
  const lanes = await context.lanes.list();
  const perLane = await Promise.all(
    lanes.map(async ({ lane }) => {
      const queue = context.queues.get(lane);
      const groups = await Promise.all(
        STATE_GROUPS.map(async ([status, types]) => {
          const jobs = (await queue.getJobs(types, 0, limit - 1, false)) as (Job | undefined)[];
          return jobs.flatMap((job) => {
            // A job removed between the range read and the fetch comes back empty.
            if (job === undefined || job === null) return [];
            const item = itemOf(job, status, context.logger);
            return item === undefined ? [] : [{ item, createdAtMs: job.timestamp }];
          });
        }),
      );
      return groups.flat();
    }),
  );
  // A job that changes state between two reads shows up twice: keep its later state.
  const byId = new Map<string, { item: RolloutListItem; createdAtMs: number }>();
  for (const entry of perLane.flat()) {
    const seen = byId.get(entry.item.id);
    if (seen === undefined || STATE_RANK[entry.item.status] > STATE_RANK[seen.item.status]) {
      byId.set(entry.item.id, entry);
    }
  }
  return [...byId.values()]
    .sort((a, b) => b.createdAtMs - a.createdAtMs || (a.item.id < b.item.id ? -1 : 1))
    .slice(0, limit)
    .map(({ item }) => item);
}
