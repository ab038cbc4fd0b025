import { createHash } from 'node:crypto';
import { FlowfleetError } from '@flowfleet/errors';
import { canonicalJson } from '@flowfleet/formats';
import type { CardRegistry } from '@flowfleet/models';
import type { rolloutRequestSchema } from '@flowfleet/protocol';
import {
  laneOfJobId,
  rolloutJobFor,
  type EnqueuedRollout,
  type Limits,
  type RolloutRequest,
} from '@flowfleet/protocol';
import type { RedisClient } from '@flowfleet/redis';
import type { Logger } from 'pino';
import type { FleetCapacity } from './fleet-capacity.js';
import type { CoordinatorKeys } from './keys.js';
import { admissionSchema, admitParsedRolloutRequest } from './rollout-admission.js';
import type { LaneQueues } from './lane-queues.js';
import type { LaneRegistry } from './lane-registry.js';
import type { WeightRegistry } from './weight-registry.js';

/** How long BullMQ keeps a finished job (its stored result files stay). */
export const JOB_RETENTION_SECONDS = 7 * 24 * 3600;

/** BullMQ retry policy: at-least-once, a retried attempt reproduces the same trajectory. */
export const JOB_ATTEMPTS = 3;

/** How long an Idempotency-Key stays bound to the request it was first sent with. */
export const IDEMPOTENCY_KEY_TTL_SECONDS = JOB_RETENTION_SECONDS;

/** The collaborators the service needs. */
export interface RolloutServiceOptions {
  readonly redis: RedisClient;
  readonly keys: CoordinatorKeys;
  readonly limits: Limits;
  /** The model cards whose request rules run at the edge and derive the requirements. */
  readonly cards: CardRegistry;
  readonly queues: LaneQueues;
  readonly lanes: LaneRegistry;
  readonly capacity: FleetCapacity;
  readonly weights: WeightRegistry;
  readonly logger: Logger;
}

/** Enqueues rollouts onto their lanes (DESIGN.md §5 "Requirements and lanes"). */
export class RolloutService {
  readonly #options: RolloutServiceOptions;
  /**
   * The `POST /v1/rollouts` body schema under this coordinator's limits: the route validates with
   * it (answering `PROTO_INVALID_REQUEST`), so `enqueue` takes the parsed request.
   */
  readonly requestSchema: ReturnType<typeof rolloutRequestSchema>;

  constructor(options: RolloutServiceOptions) {
    this.#options = options;
    this.requestSchema = admissionSchema(options.limits, options.cards);
  }

  /**
   * Picks a validated request's lane, checks capacity and enqueues one job. A rejected request
   * changes nothing: no lane record, no job. With an `idempotencyKey` (a lowercase UUID) the job
   * id carries the key and the key is bound to the request: the same request sent again adds
   * nothing (BullMQ adds a job id once) and answers the same job, even if capacity has gone since;
   * a different request under the same key is refused. The card's own request rules (the ones
   * the worker's runtime runs) decide what it needs from a worker.
   * @throws FlowfleetError `MODEL_UNKNOWN_CARD`, `MODEL_INVALID_REQUEST` (the card's rules),
   * `API_WEIGHT_VERSION_UNAVAILABLE` (a required weight version was never synced), `API_NO_CAPACITY` (no live worker satisfies the requirements and `waitForCapacity`
   * is false), `API_IDEMPOTENCY_CONFLICT` (the key was first sent with another request).
   */
  async enqueue(request: RolloutRequest, idempotencyKey?: string): Promise<EnqueuedRollout> {
    // Built from the validated request, the payload passes the workers' job schema by
    // construction (rolloutJobFor's property test); its id names its lane.
    const { capabilities } = admitParsedRolloutRequest(request, this.#options.cards);
    // Lane and id first (pure): a repeated enqueue answers before any other read.
    const routed = rolloutJobFor(request, capabilities, { idempotencyKey, weights: {} });
    const { id, lane, requirements } = routed;
    if (idempotencyKey !== undefined && (await this.#isRepeat(idempotencyKey, request, id))) {
      return {
        id,
        lane,
        status: 'queued',
        eligibleWorkers: await this.#eligible(lane, requirements),
      };
    }
    const [{ resolved, unmet }, capacity] = await Promise.all([
      this.#options.weights.resolve(request.weights),
      this.#options.capacity.check(lane, requirements),
    ]);
    // The weights a worker enforces: each maxStaleness becomes a min against today's version.
    const job = { ...routed, weights: resolved };
    if (unmet.length > 0) {
      throw new FlowfleetError(
        'API_WEIGHT_VERSION_UNAVAILABLE',
        `no synced weight version meets the requirement of ${unmet.map((u) => u.component).join(', ')}`,
        { details: { unmet } },
      );
    }
    if (capacity.eligible === 0 && !request.waitForCapacity) {
      const verdicts = capacity.verdicts ?? [];
      throw new FlowfleetError(
        'API_NO_CAPACITY',
        verdicts.length === 0
          ? `no live worker; nothing was enqueued (pass waitForCapacity: true to hold the job)`
          : `none of ${verdicts.length} live workers satisfies the requirements; nothing was enqueued`,
        { details: { lane, requirements, workers: verdicts } },
      );
    }
    const { lanes, queues, logger } = this.#options;
    // The lane record (first use only) goes out before the job on the same connection, so a
    // worker that learns of the lane finds it recorded; both in one round trip.
    await Promise.all([
      lanes.record(lane, requirements),
      queues.get(lane).add('rollout', job, {
        jobId: id,
        attempts: JOB_ATTEMPTS,
        backoff: { type: 'exponential', delay: 1_000 },
        removeOnComplete: { age: JOB_RETENTION_SECONDS },
        removeOnFail: { age: JOB_RETENTION_SECONDS },
      }),
    ]);
    logger.info({ jobId: id, lane, eligibleWorkers: capacity.eligible }, 'enqueued a rollout');
    return { id, lane, status: 'queued', eligibleWorkers: capacity.eligible };
  }

  /**
   * Binds `key` to this request on first use (SET NX, with a TTL). True when the key was already
   * bound to the same request and its job exists, so the enqueue is a retry of one that landed.
   * @throws FlowfleetError API_IDEMPOTENCY_CONFLICT when the key is bound to another request
   */
  async #isRepeat(key: string, request: RolloutRequest, id: string): Promise<boolean> {
    const { redis, keys } = this.#options;
    const digest = createHash('sha256').update(canonicalJson(request)).digest('hex');
    const redisKey = keys.idempotencyKey(key);
    const claimed = await redis.set(redisKey, digest, 'EX', IDEMPOTENCY_KEY_TTL_SECONDS, 'NX');
    if (claimed === 'OK') return false;
    const bound = await redis.get(redisKey);
    // Expired between the two calls: the key is free again; the add below is still idempotent.
    if (bound === null) return false;
    if (bound !== digest) {
      throw new FlowfleetError(
        'API_IDEMPOTENCY_CONFLICT',
        `Idempotency-Key ${key} was first sent with a different rollout request; nothing was enqueued`,
        { details: { idempotencyKey: key } },
      );
    }
    // Bound to this request, but the first attempt may have been refused (no capacity) or cut
    // before its add: then this one enqueues as usual, under the same job id.
    return this.exists(id);
  }

  /** Live workers that satisfy `requirements` now (for the answer to a repeated enqueue). */
  async #eligible(
    lane: string,
    requirements: Parameters<FleetCapacity['check']>[1],
  ): Promise<number> {
    return (await this.#options.capacity.check(lane, requirements)).eligible;
  }

  /**
   * The lane of job `id`: the lane its id names, when that lane is recorded (so no request can
   * make the coordinator open queues for lanes that do not exist). Undefined otherwise.
   */
  async laneOf(id: string): Promise<string | undefined> {
    const lane = laneOfJobId(id);
    if (lane === undefined || !(await this.#options.lanes.isRecorded(lane))) return undefined;
    return lane;
  }

  /** True while BullMQ holds job `id` (queued, running, or finished within the retention). */
  async exists(id: string): Promise<boolean> {
    const lane = await this.laneOf(id);
    if (lane === undefined) return false;
    return (await this.#options.redis.exists(this.#options.queues.get(lane).toKey(id))) === 1;
  }
}
