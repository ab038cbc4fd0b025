import { z } from 'zod';
import { IdSchema, TimestampSchema } from './atoms.js';
import { DEFAULT_LIMITS, type Limits } from './limits.js';
import { laneForRequirements, RequirementsSchema } from './requirements.js';
import { rolloutRequestSchema } from './rollout-request.js';

/**
 * The BullMQ job payload of one rollout under `limits`: the parsed request (its weight
 * requirement travels here, not in the lane), the requirements it was routed by, and its lane.
 * Validated on enqueue and again on dequeue (Redis data is untrusted); the lane must be the hash
 * of the requirements.
 */
export function rolloutJobSchema(limits: Limits = DEFAULT_LIMITS) {
  return z
    .object({
      id: IdSchema,
      lane: z.string().regex(/^lane-[0-9a-f]{16}$/, 'a lane name is lane-<16 hex digits>'),
      request: rolloutRequestSchema(limits),
      requirements: RequirementsSchema,
      enqueuedAt: TimestampSchema,
    })
    .refine((job) => job.lane === laneForRequirements(job.requirements), {
      message: 'the lane is not the hash of the requirements',
      path: ['lane'],
    })
    .refine((job) => job.requirements.model === job.request.model, {
      message: 'the requirements name another model than the request',
      path: ['requirements', 'model'],
    });
}

/** The rollout job payload schema under the default limits. */
export const RolloutJobSchema = rolloutJobSchema(DEFAULT_LIMITS);
/** The BullMQ job payload of one rollout. */
export type RolloutJob = z.output<typeof RolloutJobSchema>;
