import { z } from 'zod';
import { IdSchema, TimestampSchema } from './atoms.js';

/**
 * What a worker writes to its heartbeat key (with a TTL) on every beat: the key's presence says
 * it is alive, the body says how busy it is.
 */
export const WorkerHeartbeatSchema = z.object({
  workerId: IdSchema,
  at: TimestampSchema,
  /** Rollouts running now. */
  activeJobs: z.int().min(0),
  /** The lanes it serves now. */
  lanes: z.array(z.string().regex(/^lane-[0-9a-f]{16}$/)).default(() => []),
});
/** A worker's heartbeat. */
export type WorkerHeartbeat = z.infer<typeof WorkerHeartbeatSchema>;
