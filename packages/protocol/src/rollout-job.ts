import { z } from 'zod';
import { IdSchema, TimestampSchema } from './atoms.js';
import { DEFAULT_LIMITS, type Limits } from './limits.js';
import {
  laneForRequirements,
  requirementsFor,
  RequirementsSchema,
  type ModelCapabilities,
} from './requirements.js';
import { laneOfJobId, newRolloutJobId } from './rollout-job-id.js';
import { rolloutRequestSchema, type RolloutRequest } from './rollout-request.js';

/**
 * The BullMQ job payload of one rollout under `limits`: the parsed request (its weight
 * requirement travels here, not in the lane), the requirements it was routed by, and its lane.
 * Workers validate it on dequeue (Redis data is untrusted); the lane must be the hash of the
 * requirements and the id must name the lane.
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
    .refine((job) => laneOfJobId(job.id) === job.lane, {
      message: 'the id does not name the lane (lane-<hash>.<uuid>)',
      path: ['id'],
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

/**
 * The job payload of a request that passed `rolloutRequestSchema` and its card's rules: the
 * request, its requirements (from the card's `capabilities`), their lane, and a new id naming that
 * lane (carrying `idempotencyKey`, a lowercase UUID, when given). Built only here, the payload satisfies `rolloutJobSchema` by construction (a property
 * test holds it to that), so the enqueue path does not parse it again; workers do, on dequeue.
 */
export function rolloutJobFor(
  request: RolloutRequest,
  capabilities: ModelCapabilities,
  enqueuedAt = new Date(),
  idempotencyKey?: string,
): RolloutJob {
  const requirements = requirementsFor(request, capabilities);
  const lane = laneForRequirements(requirements);
  return {
    id: newRolloutJobId(lane, idempotencyKey),
    lane,
    request,
    requirements,
    enqueuedAt: enqueuedAt.toISOString(),
  };
}
