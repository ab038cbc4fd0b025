import { FlowfleetError } from '@flowfleet/errors';
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
import {
  ResolvedWeightRequirementsSchema,
  type ResolvedWeightRequirements,
  type WeightRequirements,
} from './weight-requirement.js';

/**
 * The BullMQ job payload of one rollout under `limits`: the parsed request as it was sent, the
 * weight requirements a worker enforces (`weights`: the request's, with every `maxStaleness`
 * turned into a `min` at enqueue; they travel here, not in the lane), the requirements it was
 * routed by, and its lane.
 * Workers validate it on dequeue (Redis data is untrusted); the lane must be the hash of the
 * requirements and the id must name the lane.
 */
export function rolloutJobSchema(limits: Limits = DEFAULT_LIMITS) {
  return z
    .object({
      id: IdSchema,
      lane: z.string().regex(/^lane-[0-9a-f]{16}$/, 'a lane name is lane-<16 hex digits>'),
      request: rolloutRequestSchema(limits),
      weights: ResolvedWeightRequirementsSchema,
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

/** How a job is built beyond its request and capabilities. */
export interface RolloutJobOptions {
  readonly enqueuedAt?: Date;
  /** The enqueue's Idempotency-Key (a lowercase UUID): the job id carries it. */
  readonly idempotencyKey?: string | undefined;
  /**
   * The weight requirements a worker enforces. Default: the request's, which then must hold no
   * `maxStaleness` (only the coordinator, knowing the current versions, resolves those).
   */
  readonly weights?: ResolvedWeightRequirements;
}

/**
 * The weight requirements of `required` when none is relative to the current version.
 * @throws FlowfleetError PROTO_INVALID_REQUEST when one is a `maxStaleness`
 */
export function staticWeightRequirements(required: WeightRequirements): ResolvedWeightRequirements {
  const resolved: Record<string, ResolvedWeightRequirements[string]> = {};
  for (const [component, requirement] of Object.entries(required)) {
    if ('maxStaleness' in requirement) {
      throw new FlowfleetError(
        'PROTO_INVALID_REQUEST',
        `weights.${component}: a maxStaleness requirement is resolved against the current version at enqueue`,
        {
          details: {
            issues: [{ path: ['weights', component], message: 'unresolved maxStaleness' }],
          },
        },
      );
    }
    resolved[component] = requirement;
  }
  return resolved;
}

/**
 * The job payload of a request that passed `rolloutRequestSchema` and its card's rules: the
 * request, the weight requirements to enforce, its requirements (from the card's
 * `capabilities`), their lane, and a new id naming that lane (carrying the idempotency key when
 * given). Built only here, the payload satisfies `rolloutJobSchema` by construction (a property
 * test holds it to that), so the enqueue path does not parse it again; workers do, on dequeue.
 * @throws FlowfleetError PROTO_INVALID_REQUEST for an unresolved `maxStaleness` (no `weights`)
 */
export function rolloutJobFor(
  request: RolloutRequest,
  capabilities: ModelCapabilities,
  options: RolloutJobOptions = {},
): RolloutJob {
  const requirements = requirementsFor(request, capabilities);
  const lane = laneForRequirements(requirements);
  return {
    id: newRolloutJobId(lane, options.idempotencyKey),
    lane,
    request,
    weights: options.weights ?? staticWeightRequirements(request.weights),
    requirements,
    enqueuedAt: (options.enqueuedAt ?? new Date()).toISOString(),
  };
}
