import { RolloutVideoSchema } from '@flowfleet/formats';
import type { FleetLimits, JobState, ListedFrames, RolloutListItem } from '@flowfleet/protocol';
import type { JobType } from 'bullmq';
import { z } from 'zod';
import { jobViewOf } from '../job-view.js';
import type { LaneQueues } from '../lane-queues.js';
import type { LaneRegistry } from '../lane-registry.js';
import { readStoredJob } from '../stored-job.js';

/** Prompts are listed cut to this many characters (the full request is on the job). */
export const LISTED_PROMPT_CHARS = 120;

/** `GET /v1/rollouts` query. */
export const RolloutListQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

/** BullMQ states read per listed status (a retried job waits in `delayed`: `queued`). */
const STATE_GROUPS: readonly (readonly [JobType, JobType[]])[] = [
  ['active', ['active']],
  ['waiting', ['waiting', 'prioritized', 'delayed']],
  ['completed', ['completed']],
  ['failed', ['failed']],
];

/** The two fields of a completed job's summary (its BullMQ return value) that name its frames. */
const SummaryFramesSchema = z.object({
  video: RolloutVideoSchema,
  frameIndices: z.array(z.int().min(0)).min(1),
});

/**
 * The frames a completed job returned, from the summary its worker completed it with (no blob
 * read: listing stays as cheap as it was); undefined without frames or without a readable
 * summary.
 */
function listedFramesOf(returnValue: unknown): ListedFrames | undefined {
  const parsed = SummaryFramesSchema.safeParse(returnValue);
  if (!parsed.success) return undefined;
  const { video, frameIndices } = parsed.data;
  return { indices: frameIndices, width: video.width, height: video.height };
}

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
  readonly fleetLimits: FleetLimits;
}

/**
 * The `limit` most recently created rollouts across every recorded lane, newest first, with their
 * status and step progress (the same view as a job's status) and, once completed, the frames they
 * returned. Reads at most `limit` jobs per lane and BullMQ state, and no stored result. A job
 * whose payload cannot be read is listed as failed, without its request.
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
        STATE_GROUPS.map(async ([state, types]) => {
          const ids = await queue.getRanges(types, 0, limit - 1, false);
          const entries = await Promise.all(
            ids.map(async (id) => {
              // A job removed between the range read and the fetch comes back empty.
              const stored = await readStoredJob(queue, id, context.fleetLimits);
              if (stored === undefined) return [];
              const view = jobViewOf(id, lane, state, stored.job, stored.read);
              const request = stored.read.ok ? stored.read.payload.request : undefined;
              const frames =
                view.status === 'completed' ? listedFramesOf(stored.job.returnvalue) : undefined;
              const item: RolloutListItem = {
                ...view,
                ...(request === undefined
                  ? {}
                  : {
                      model: request.model,
                      prompt: request.prompt.slice(0, LISTED_PROMPT_CHARS),
                      groupSize: request.seeds.length,
                    }),
                ...(frames === undefined ? {} : { frames }),
              };
              return [{ item, createdAtMs: stored.job.timestamp }];
            }),
          );
          return entries.flat();
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
