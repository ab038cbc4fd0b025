import { createHash } from 'node:crypto';
import { FlowfleetError } from '@flowfleet/errors';
import { canonicalJson } from '@flowfleet/formats';
import type { CardRegistry } from '@flowfleet/models';
import type { rolloutRequestSchema } from '@flowfleet/protocol';
import {
  EnqueuedRolloutSchema,
  laneOfJobId,
  type CancelledRollout,
  rolloutJobFor,
  type EnqueuedRollout,
  type Limits,
  type RolloutRequest,
} from '@flowfleet/protocol';
import {
  confirmReplicated,
  isCluster,
  markWrites,
  NO_REPLICATION_WAIT,
  type RedisClient,
  type ReplicationPolicy,
} from '@flowfleet/redis';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { FleetCapacity } from './fleet-capacity.js';
import { jobStateOf } from './job-view.js';
import type { CoordinatorKeys } from './keys.js';
import type { BlobStore } from './blob-store.js';
import { admissionSchema, admitParsedRolloutRequest } from './rollout-admission.js';
import { checkTextEmbeds } from './text-embeds-check.js';
import type { LaneQueues } from './lane-queues.js';
import type { LaneRegistry } from './lane-registry.js';
import type { RetentionSettings } from './retention/retention-settings.js';
import type { WeightRegistry } from './weight-registry.js';

/** BullMQ states of a job no attempt holds and that will run: what DELETE may remove. */
const CANCELLABLE_STATES: ReadonlySet<string> = new Set(['waiting', 'delayed', 'prioritized']);

/** BullMQ retry policy: at-least-once, a retried attempt reproduces the same trajectory. */
export const JOB_ATTEMPTS = 3;

/** What an Idempotency-Key holds once its enqueue answered: the request's digest and the answer. */
const IdempotencyRecordSchema = z.object({
  digest: z.string().regex(/^[0-9a-f]{64}$/),
  answer: EnqueuedRolloutSchema,
});
type IdempotencyRecord = z.infer<typeof IdempotencyRecordSchema>;

/**
 * Reads an Idempotency-Key's value (Redis data is untrusted): the bare digest a claim writes, or
 * the record with the answer; an unreadable record keeps its digest only when one can be read.
 */
function parseIdempotencyRecord(
  value: string | null,
): { digest: string; answer?: EnqueuedRollout } | undefined {
  if (value === null) return undefined;
  if (!value.startsWith('{')) return { digest: value };
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    return { digest: value };
  }
  const record = IdempotencyRecordSchema.safeParse(json);
  if (record.success) return record.data;
  const digest = (json as { digest?: unknown } | null)?.digest;
  return { digest: typeof digest === 'string' ? digest : value };
}

/** The collaborators the service needs. */
export interface RolloutServiceOptions {
  readonly redis: RedisClient;
  readonly keys: CoordinatorKeys;
  readonly limits: Limits;
  /** The model cards whose request rules run at the edge and derive the requirements. */
  readonly cards: CardRegistry;
  /** Where the text embeddings a request names must be (checked before the 202). */
  readonly blobs: Pick<BlobStore, 'blobDigest'>;
  readonly queues: LaneQueues;
  readonly lanes: LaneRegistry;
  readonly capacity: FleetCapacity;
  readonly weights: WeightRegistry;
  /**
   * Finished jobs are kept this long (and at most `jobsKept` per lane and state); an
   * Idempotency-Key stays bound to its request as long.
   */
  readonly retention: Pick<RetentionSettings, 'jobRetentionSeconds' | 'jobsKept'>;
  readonly logger: Logger;
  /**
   * Replicas that must hold an enqueue before it is answered (`FLOWFLEET_REDIS_WAIT_REPLICAS`;
   * default none: ADR 010).
   */
  readonly replication?: ReplicationPolicy;
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
    this.requestSchema = admissionSchema(options.limits);
  }

  /**
   * Picks a validated request's lane, checks capacity and enqueues one job. A rejected request
   * changes nothing: no lane record, no job. With an `idempotencyKey` (a lowercase UUID) the job
   * id carries the key and the key is bound to the request: the same request sent again adds
   * nothing (BullMQ adds a job id once) and answers the same job, even if capacity has gone since;
   * a different request under the same key is refused. The card's own request rules (the ones
   * the worker's runtime runs) resolve it — the job stores the card's resolved request — and decide
   * what it needs from a worker; the text embeddings it names must be uploaded, of the card's dims.
   * @throws FlowfleetError `MODEL_UNKNOWN_CARD`, `MODEL_INVALID_REQUEST` (the card's rules),
   * `PROTO_INVALID_REQUEST` (the resolved latent over the limit), `API_EMBEDS_NOT_FOUND`,
   * `API_EMBEDS_INVALID`,
   * `API_WEIGHT_VERSION_UNAVAILABLE` (no live worker that can run the job serves or can load a
   * required weight version: never synced, refused, or moved past), `API_NO_CAPACITY` (no live worker satisfies the requirements and `waitForCapacity`
   * is false), `API_IDEMPOTENCY_CONFLICT` (the key was first sent with another request),
   * `REDIS_NOT_REPLICATED` (a replication policy is set and fewer replicas than it asks hold the
   * job: it is on the master, and a retry under the same Idempotency-Key answers the same job
   * once replicated, or re-adds it if a failover lost it).
   */
  async enqueue(request: RolloutRequest, idempotencyKey?: string): Promise<EnqueuedRollout> {
    const replication = this.#options.replication ?? NO_REPLICATION_WAIT;
    // Every write below goes out on this one connection; WAIT then covers them all (ADR 010).
    const mark = markWrites(this.#options.redis);
    const answer = await this.#enqueue(request, idempotencyKey, replication.replicas > 0);
    await confirmReplicated(mark, replication);
    return answer;
  }

  async #enqueue(
    parsed: RolloutRequest,
    idempotencyKey: string | undefined,
    replicated: boolean,
  ): Promise<EnqueuedRollout> {
    // Built from the card's resolved request, the payload passes the workers' job schema by
    // construction (rolloutJobFor's property test); its id names its lane.
    const { request, capabilities, card } = admitParsedRolloutRequest(
      parsed,
      this.#options.cards,
      this.#options.limits,
    );
    await checkTextEmbeds(card.textEmbeddings, request, this.#options.blobs);
    // Lane and id first (pure): a repeated enqueue answers before any other read.
    const routed = rolloutJobFor(request, capabilities, { idempotencyKey, weights: {} });
    const { id, lane, requirements } = routed;
    const claim =
      idempotencyKey === undefined ? undefined : await this.#claim(idempotencyKey, request, id);
    if (claim?.repeat === true && idempotencyKey !== undefined) {
      // The original answer when it was stored; a first attempt cut between its add and its
      // answer (a killed coordinator) stored none: then the job as it is now.
      const answer = claim.answer ?? {
        id,
        lane,
        status: 'queued' as const,
        eligibleWorkers: await this.#eligible(lane, requirements),
      };
      // A read moves no replication offset: one write of this connection (the record again) makes
      // the WAIT that follows cover the job another attempt added.
      if (replicated) await this.#storeAnswer(idempotencyKey, claim.digest, answer);
      return answer;
    }
    const withWeights = Object.keys(request.weights).length > 0;
    const capacity = await this.#options.capacity.check(lane, requirements, withWeights);
    // Judged against what the live workers that can run the job serve (ADR 012): a version no
    // eligible worker serves or can load is refused here, not failed by a worker later; each
    // maxStaleness becomes a min against the newest version they serve.
    const { resolved, unmet } = await this.#options.weights.resolve(
      request.weights,
      capacity.holders ?? [],
    );
    const job = { ...routed, weights: resolved };
    if (unmet.length > 0) {
      throw new FlowfleetError(
        'API_WEIGHT_VERSION_UNAVAILABLE',
        `no live worker can serve the weights of ${unmet
          .map((u) => `${u.component} (${u.reason})`)
          .join(', ')}; nothing was enqueued`,
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
    const { lanes, queues, logger, retention } = this.#options;
    const keep = { age: retention.jobRetentionSeconds, count: retention.jobsKept };
    // The lane record (first use only) goes out before the job on the same connection, so a
    // worker that learns of the lane finds it recorded; both in one round trip.
    await Promise.all([
      lanes.record(lane, requirements),
      queues.get(lane).add('rollout', job, {
        jobId: id,
        attempts: JOB_ATTEMPTS,
        backoff: { type: 'exponential', delay: 1_000 },
        removeOnComplete: keep,
        removeOnFail: keep,
      }),
    ]);
    logger.info({ jobId: id, lane, eligibleWorkers: capacity.eligible }, 'enqueued a rollout');
    this.#announceWork(lane);
    const answer: EnqueuedRollout = {
      id,
      lane,
      status: 'queued',
      eligibleWorkers: capacity.eligible,
    };
    if (claim !== undefined && idempotencyKey !== undefined) {
      await this.#storeAnswer(idempotencyKey, claim.digest, answer);
    }
    return answer;
  }

  /**
   * On a Redis Cluster, names the lane on the lane-work channel so that idle workers serving it
   * wake now rather than at their next poll (on one server they XREAD the lane's events stream).
   * Best effort: the job is queued whatever becomes of the message.
   */
  #announceWork(lane: string): void {
    const { redis, keys, logger } = this.#options;
    if (!isCluster(redis)) return;
    redis.publish(keys.laneWorkChannel, lane).catch((error: unknown) => {
      logger.debug({ err: error, lane }, 'announcing work on the lane-work channel failed');
    });
  }

  /** Keeps the answer beside the key's digest, so a repeat gets the original answer. */
  async #storeAnswer(key: string, digest: string, answer: EnqueuedRollout): Promise<void> {
    const { redis, keys } = this.#options;
    const record: IdempotencyRecord = { digest, answer };
    await redis.set(keys.idempotencyKey(key), JSON.stringify(record), 'KEEPTTL', 'XX');
  }

  /**
   * Binds `key` to this request on first use (SET NX, with a TTL). A repeat when the key was
   * already bound to the same request and its job exists (the enqueue is a retry of one that
   * landed), with the original answer when it was stored.
   * @throws FlowfleetError API_IDEMPOTENCY_CONFLICT when the key is bound to another request
   */
  async #claim(
    key: string,
    request: RolloutRequest,
    id: string,
  ): Promise<{ repeat: boolean; digest: string; answer?: EnqueuedRollout | undefined }> {
    const { redis, keys } = this.#options;
    const digest = createHash('sha256').update(canonicalJson(request)).digest('hex');
    const redisKey = keys.idempotencyKey(key);
    // Bound for as long as a finished job is kept (the retention's job age).
    const ttlSeconds = this.#options.retention.jobRetentionSeconds;
    const claimed = await redis.set(redisKey, digest, 'EX', ttlSeconds, 'NX');
    if (claimed === 'OK') return { repeat: false, digest };
    const bound = parseIdempotencyRecord(await redis.get(redisKey));
    // Expired between the two calls: the key is free again; the add below is still idempotent.
    if (bound === undefined) return { repeat: false, digest };
    if (bound.digest !== digest) {
      throw new FlowfleetError(
        'API_IDEMPOTENCY_CONFLICT',
        `Idempotency-Key ${key} was first sent with a different rollout request; nothing was enqueued`,
        { details: { idempotencyKey: key } },
      );
    }
    // Bound to this request, but the first attempt may have been refused (no capacity) or cut
    // before its add: then this one enqueues as usual, under the same job id.
    const repeat = await this.exists(id);
    return { repeat, digest, answer: repeat ? bound.answer : undefined };
  }

  /** Live workers that satisfy `requirements` now (for the answer to a repeated enqueue). */
  async #eligible(
    lane: string,
    requirements: Parameters<FleetCapacity['check']>[1],
  ): Promise<number> {
    return (await this.#options.capacity.check(lane, requirements)).eligible;
  }

  /**
   * Cancels job `id` while it is queued (waiting, delayed after a failed attempt, or prioritized):
   * BullMQ removes it atomically unless a worker holds its lock, so a job is either removed before
   * any attempt takes it again or left alone. A running job is not abandoned: it finishes and
   * stores its result as usual; a finished one stays until its retention.
   * @throws FlowfleetError API_JOB_NOT_FOUND (unknown, past its retention, or already cancelled),
   *   API_JOB_NOT_CANCELLABLE (`details.status`: active, completed or failed)
   */
  async cancel(id: string): Promise<CancelledRollout> {
    const lane = await this.laneOf(id);
    const notFound = () =>
      new FlowfleetError('API_JOB_NOT_FOUND', `no rollout job ${id}`, { details: { id } });
    if (lane === undefined) throw notFound();
    const queue = this.#options.queues.get(lane);
    let state = await queue.getJobState(id);
    if (state === 'unknown') throw notFound();
    if (CANCELLABLE_STATES.has(state)) {
      // 0: a worker took it between the two reads (it holds the lock): say what it is now.
      if ((await queue.remove(id, { removeChildren: false })) === 1) {
        this.#options.logger.info({ jobId: id, lane }, 'cancelled a queued rollout');
        return { id, lane, status: 'cancelled' };
      }
      state = await queue.getJobState(id);
      if (state === 'unknown') throw notFound();
    }
    const status = jobStateOf(state);
    throw new FlowfleetError(
      'API_JOB_NOT_CANCELLABLE',
      status === 'active'
        ? `rollout ${id} is running: it finishes and stores its result (only a queued job can be cancelled)`
        : `rollout ${id} is ${status}: only a queued job can be cancelled`,
      { details: { id, status } },
    );
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
