import { randomUUID } from 'node:crypto';
import { FlowfleetError } from '@flowfleet/errors';
import {
  laneForRequirements,
  manifestSatisfies,
  parseOrThrow,
  requirementsFor,
  rolloutJobSchema,
  rolloutRequestSchema,
  type Limits,
  type Requirements,
  type RolloutJob,
  type RolloutRequest,
} from '@flowfleet/protocol';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { FleetReader, WorkerView } from './fleet-reader.js';
import type { CoordinatorKeys } from './keys.js';
import type { LaneQueues } from './lane-queues.js';
import type { LaneRegistry } from './lane-registry.js';
import type { WeightRegistry } from './weight-registry.js';

/** What `POST /v1/rollouts` answers. */
export interface EnqueuedRollout {
  readonly id: string;
  readonly lane: string;
  readonly status: 'queued';
  /** How many live workers can serve the lane right now (0 only with waitForCapacity). */
  readonly eligibleWorkers: number;
}

/** How long job records (BullMQ job, id → lane) are kept after they finish. */
export const JOB_RETENTION_SECONDS = 7 * 24 * 3600;

/** BullMQ retry policy: at-least-once, a retried attempt reproduces the same trajectory. */
export const JOB_ATTEMPTS = 3;

/** The collaborators the service needs. */
export interface RolloutServiceOptions {
  readonly redis: Redis;
  readonly keys: CoordinatorKeys;
  readonly limits: Limits;
  readonly queues: LaneQueues;
  readonly lanes: LaneRegistry;
  readonly fleet: FleetReader;
  readonly weights: WeightRegistry;
  readonly logger: Logger;
}

/** One live worker's verdict on a job's requirements. */
export interface WorkerVerdict {
  readonly workerId: string;
  readonly ok: boolean;
  readonly reasons: readonly string[];
}

/** Which live workers satisfy `requirements`, with every other worker's reasons. */
export function judgeWorkers(
  workers: readonly WorkerView[],
  requirements: Requirements,
): WorkerVerdict[] {
  return workers
    .filter((worker) => worker.alive)
    .map((worker) => {
      const verdict = manifestSatisfies(worker.manifest, requirements);
      return {
        workerId: worker.workerId,
        ok: verdict.ok,
        reasons: verdict.ok ? [] : verdict.reasons,
      };
    });
}

/** Enqueues rollouts onto their lanes (DESIGN.md §5 "Requirements and lanes"). */
export class RolloutService {
  readonly #options: RolloutServiceOptions;
  readonly #requestSchema: ReturnType<typeof rolloutRequestSchema>;
  readonly #jobSchema: ReturnType<typeof rolloutJobSchema>;

  constructor(options: RolloutServiceOptions) {
    this.#options = options;
    this.#requestSchema = rolloutRequestSchema(options.limits);
    this.#jobSchema = rolloutJobSchema(options.limits);
  }

  /**
   * Validates a request, picks its lane, checks capacity and enqueues one job. A rejected
   * request changes nothing: no lane record, no job.
   * @throws FlowfleetError `PROTO_INVALID_REQUEST` (schema, limits), `API_WEIGHT_VERSION_UNAVAILABLE`
   * (a required weight version was never synced), `API_NO_CAPACITY` (no live worker satisfies the
   * requirements and `waitForCapacity` is false).
   */
  async enqueue(body: unknown): Promise<EnqueuedRollout> {
    const request: RolloutRequest = parseOrThrow(
      this.#requestSchema,
      body,
      'PROTO_INVALID_REQUEST',
      'rollout request',
    );
    const requirements = requirementsFor(request);
    const lane = laneForRequirements(requirements);
    const unmet = await this.#options.weights.unavailable(request.weights);
    if (unmet.length > 0) {
      throw new FlowfleetError(
        'API_WEIGHT_VERSION_UNAVAILABLE',
        `no synced weight version meets the requirement of ${unmet.map((u) => u.component).join(', ')}`,
        { details: { unmet } },
      );
    }
    const verdicts = judgeWorkers(await this.#options.fleet.workers(), requirements);
    const eligible = verdicts.filter((verdict) => verdict.ok).length;
    if (eligible === 0 && !request.waitForCapacity) {
      throw new FlowfleetError(
        'API_NO_CAPACITY',
        verdicts.length === 0
          ? `no live worker; nothing was enqueued (pass waitForCapacity: true to hold the job)`
          : `none of ${verdicts.length} live workers satisfies the requirements; nothing was enqueued`,
        { details: { lane, requirements, workers: verdicts } },
      );
    }
    const id = randomUUID();
    const job: RolloutJob = parseOrThrow(
      this.#jobSchema,
      { id, lane, request, requirements, enqueuedAt: new Date().toISOString() },
      'PROTO_INVALID_JOB',
      'rollout job',
    );
    const { redis, keys, lanes, queues, logger } = this.#options;
    await lanes.record(lane, requirements);
    // The id → lane record comes first, so a status query never sees a job it cannot locate.
    await redis.set(keys.job(id), lane, 'EX', JOB_RETENTION_SECONDS);
    await queues.get(lane).add('rollout', job, {
      jobId: id,
      attempts: JOB_ATTEMPTS,
      backoff: { type: 'exponential', delay: 1_000 },
      removeOnComplete: { age: JOB_RETENTION_SECONDS },
      removeOnFail: { age: JOB_RETENTION_SECONDS },
    });
    logger.info({ jobId: id, lane, eligibleWorkers: eligible }, 'enqueued a rollout');
    return { id, lane, status: 'queued', eligibleWorkers: eligible };
  }

  /** The lane a job id was enqueued on, or undefined for an unknown id. */
  async laneOf(id: string): Promise<string | undefined> {
    return (await this.#options.redis.get(this.#options.keys.job(id))) ?? undefined;
  }
}
