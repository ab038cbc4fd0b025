import { FlowfleetError } from '@flowfleet/errors';
import type { CardRegistry } from '@flowfleet/models';
import { laneOfJobId, rolloutJobFor, rolloutRequestSchema, type Limits } from '@flowfleet/protocol';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { FleetCapacity } from './fleet-capacity.js';
import type { LaneQueues } from './lane-queues.js';
import type { LaneRegistry } from './lane-registry.js';
import { admitRolloutRequest } from './rollout-admission.js';
import type { WeightRegistry } from './weight-registry.js';

/** What `POST /v1/rollouts` answers. */
export interface EnqueuedRollout {
  readonly id: string;
  readonly lane: string;
  readonly status: 'queued';
  /** How many live workers can serve the lane right now (0 only with waitForCapacity). */
  readonly eligibleWorkers: number;
}

/** How long BullMQ keeps a finished job (its stored result files stay). */
export const JOB_RETENTION_SECONDS = 7 * 24 * 3600;

/** BullMQ retry policy: at-least-once, a retried attempt reproduces the same trajectory. */
export const JOB_ATTEMPTS = 3;

/** The collaborators the service needs. */
export interface RolloutServiceOptions {
  readonly redis: Redis;
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
  readonly #requestSchema: ReturnType<typeof rolloutRequestSchema>;

  constructor(options: RolloutServiceOptions) {
    this.#options = options;
    this.#requestSchema = rolloutRequestSchema(options.limits);
  }

  /**
   * Validates a request, picks its lane, checks capacity and enqueues one job. A rejected
   * request changes nothing: no lane record, no job.
   * @throws FlowfleetError `PROTO_INVALID_REQUEST` (schema, limits), `MODEL_UNKNOWN_CARD`,
   * `MODEL_INVALID_REQUEST` (the card's own rules, the ones the worker runs),
   * `API_WEIGHT_VERSION_UNAVAILABLE`
   * (a required weight version was never synced), `API_NO_CAPACITY` (no live worker satisfies the
   * requirements and `waitForCapacity` is false).
   */
  async enqueue(body: unknown): Promise<EnqueuedRollout> {
    const { request, capabilities } = admitRolloutRequest(
      body,
      this.#requestSchema,
      this.#options.cards,
    );
    // Built from the validated request, the payload passes the workers' job schema by
    // construction (rolloutJobFor's property test); its id names its lane.
    const job = rolloutJobFor(request, capabilities);
    const { id, lane, requirements } = job;
    const [unmet, capacity] = await Promise.all([
      this.#options.weights.unavailable(request.weights),
      this.#options.capacity.check(lane, requirements),
    ]);
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
