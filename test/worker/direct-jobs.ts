// Writes lanes and jobs the way the coordinator does, for lanes the coordinator's API cannot
// create (requirements with a model-level op) and for announcements the worker must have missed.
import { admitRolloutRequest, coordinatorKeys } from '@flowfleet/coordinator';
import { DEFAULT_CARD_REGISTRY } from '@flowfleet/models';
import {
  DEFAULT_LIMITS,
  laneForRequirements,
  newRolloutJobId,
  requirementsFor,
  rolloutRequestSchema,
  staticWeightRequirements,
  type LaneSpec,
  type Requirements,
} from '@flowfleet/protocol';
import { Queue, type JobsOptions } from 'bullmq';
import type { RedisClient } from '@flowfleet/redis';

/** Requirements of a request body as its card derives them, plus extra (model-level) ops. */
export function requirementsOf(
  body: Record<string, unknown>,
  extraOps: string[] = [],
): Requirements {
  const request = rolloutRequestSchema().parse(body);
  const capabilities = DEFAULT_CARD_REGISTRY.capabilities(request.model, request);
  return requirementsFor(request, {
    ops: [...capabilities.ops, ...extraOps],
    componentKinds: capabilities.componentKinds,
  });
}

/** Records a lane in the lanes hash; announces it on the lane channel unless `announce` is false. */
export async function recordLane(
  redis: RedisClient,
  prefix: string,
  requirements: Requirements,
  announce: boolean,
): Promise<string> {
  const keys = coordinatorKeys(prefix);
  const lane = laneForRequirements(requirements);
  const spec: LaneSpec = { lane, requirements, createdAt: new Date().toISOString() };
  await redis.hset(keys.lanes, lane, JSON.stringify(spec));
  if (announce) await redis.publish(keys.laneChannel, JSON.stringify(spec));
  return lane;
}

/**
 * Adds a rollout job straight to a lane's BullMQ queue with the coordinator's options and an id
 * that names its lane (as the coordinator's are). The lane must be recorded (`recordLane`) for the
 * coordinator's result routes to accept the job's results. `data` overrides the payload (to test
 * untrusted data).
 */
export async function addJob(
  redis: RedisClient,
  prefix: string,
  body: Record<string, unknown>,
  requirements: Requirements,
  data?: unknown,
  jobOptions: JobsOptions = {},
): Promise<{ id: string; lane: string }> {
  const keys = coordinatorKeys(prefix);
  const lane = laneForRequirements(requirements);
  const id = newRolloutJobId(lane);
  // Stored as the coordinator stores it: the card's resolved request.
  const { request } = admitRolloutRequest(
    body,
    rolloutRequestSchema(),
    DEFAULT_CARD_REGISTRY,
    DEFAULT_LIMITS,
  );
  const payload = data ?? {
    id,
    lane,
    request,
    weights: staticWeightRequirements(request.weights),
    requirements,
    enqueuedAt: new Date().toISOString(),
  };
  const queue = new Queue(lane, { connection: redis, prefix: keys.laneBullPrefix(lane) });
  try {
    await queue.add('rollout', payload, {
      jobId: id,
      attempts: 3,
      backoff: { type: 'exponential', delay: 200 },
      ...jobOptions,
    });
  } finally {
    await queue.close();
  }
  return { id, lane };
}

/** Reads a lane's BullMQ event stream (oldest first) as `{event, ...fields}` records. */
export async function laneEvents(
  redis: RedisClient,
  prefix: string,
  lane: string,
): Promise<Record<string, string>[]> {
  const key = `${coordinatorKeys(prefix).laneBullPrefix(lane)}:${lane}:events`;
  const entries = await redis.xrange(key, '-', '+');
  return entries.map(([, fields]) => {
    const record: Record<string, string> = {};
    for (let i = 0; i + 1 < fields.length; i += 2) record[fields[i] ?? ''] = fields[i + 1] ?? '';
    return record;
  });
}
