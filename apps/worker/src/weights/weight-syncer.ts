import { setTimeout as delay } from 'node:timers/promises';
import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import type { TensorData } from '@flowfleet/platform';
import {
  isWeightRequirementMet,
  Sha256Schema,
  weightSyncSchema,
  type FleetKeys,
  type FleetLimits,
  type Limits,
  type SyncAck,
  type SyncStatus,
  type ResolvedWeightRequirement,
  type WeightSync,
} from '@flowfleet/protocol';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { z } from 'zod';
import { verifyWeightsBlob } from './blob-verifier.js';

/** The part of the ModelHost a sync touches. */
export interface WeightTarget {
  componentIds(): readonly string[];
  held(): Readonly<Record<string, number>>;
  shapes(component: string): ReadonlyMap<string, readonly number[]>;
  setWeightsVersion(
    component: string,
    version: number,
    sha256: string,
    tensors: ReadonlyMap<string, TensorData>,
  ): Promise<number | void>;
}

/** Where blobs come from (the coordinator's `GET /v1/blobs/:sha256`, retried by the source). */
export interface BlobSource {
  fetchBlob(sha256: string, maxBytes: number, signal?: AbortSignal): Promise<Uint8Array>;
}

/** What `WeightSyncer` needs. */
export interface WeightSyncerOptions {
  readonly redis: Redis;
  readonly keys: FleetKeys;
  readonly workerId: string;
  readonly target: WeightTarget;
  readonly blobs: BlobSource;
  /**
   * The fleet's published limits: a sync's size and the download are bounded by them (a
   * coordinator may accept bigger blobs than the defaults allow).
   */
  readonly limits: Pick<FleetLimits, 'current' | 'refresh'>;
  readonly logger: Logger;
  /** Called after a version is staged (the manifest's weights map changed). */
  readonly onWeightsChanged: () => void;
}

/** What became of one sync here (`stale`: not newer than what is held; `ignored`: not ours). */
export type SyncOutcome = SyncStatus | 'stale' | 'ignored';

/** The coordinator's record of a version in the weights hash (`v:<n>`). */
const VersionRecordSchema = z.object({ sha256: Sha256Schema, sizeBytes: z.int().min(1) });

const STREAM_PAGE = 500;

function parseJson(text: string | null | undefined): unknown {
  if (text === null || text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Keeps the worker's weights in step with the trainer's syncs (DESIGN §5 "Weight sync"): for each
 * sync newer than what it holds, fetch the blob, verify it, stage it (the component's old graphs
 * are evicted), and ack in `acks(component, version)`. Syncs of one component run one at a time
 * and versions only increase. A bad blob is refused once and remembered; a failed download is
 * acked `failed` and tried again on the next catch-up.
 */
export class WeightSyncer {
  readonly #options: WeightSyncerOptions;
  readonly #chains = new Map<string, Promise<unknown>>();
  readonly #refused = new Map<string, string>();
  /** Per component, the newest sync whose download or staging failed: retried on catch-up. */
  readonly #failed = new Map<string, WeightSync>();
  readonly #abort = new AbortController();
  #lastStreamId = '0-0';

  constructor(options: WeightSyncerOptions) {
    this.#options = options;
  }

  /** Handles one message of the sync channel (malformed ones are logged and dropped). */
  handleMessage(text: string): void {
    const { logger } = this.#options;
    void (async () => {
      const parsed = await this.#parseSync(parseJson(text));
      if (!parsed.success) {
        logger.warn({ issues: parsed.error.issues }, 'ignoring a malformed sync message');
        return;
      }
      await this.apply(parsed.data);
    })().catch((error: unknown) => logger.error({ err: error }, 'weight sync failed'));
  }

  /**
   * Reads the sync stream past the last entry seen and applies, per component, the newest version
   * above the one held (falling back to older ones when it is refused). Syncs that failed earlier
   * (the coordinator was unreachable) are tried again.
   */
  async catchUp(): Promise<void> {
    const { redis, keys, logger } = this.#options;
    const byComponent = new Map<string, WeightSync[]>();
    for (const [component, sync] of this.#failed) byComponent.set(component, [sync]);
    for (;;) {
      const start = this.#lastStreamId === '0-0' ? '-' : `(${this.#lastStreamId}`;
      const entries = await redis.xrange(keys.syncStream, start, '+', 'COUNT', STREAM_PAGE);
      for (const [id, fields] of entries) {
        this.#lastStreamId = id;
        const index = fields.indexOf('sync');
        const parsed = await this.#parseSync(parseJson(fields[index + 1]));
        if (index < 0 || index % 2 !== 0 || !parsed.success) {
          logger.warn({ streamId: id }, 'ignoring a malformed sync stream entry');
          continue;
        }
        const list = byComponent.get(parsed.data.component) ?? [];
        list.push(parsed.data);
        byComponent.set(parsed.data.component, list);
      }
      if (entries.length < STREAM_PAGE) break;
    }
    await Promise.all(
      [...byComponent.entries()].map(async ([, syncs]) => {
        const newestFirst = syncs.sort((a, b) => b.version - a.version);
        for (const sync of newestFirst) {
          const outcome = await this.apply(sync);
          if (outcome !== 'refused') break;
        }
      }),
    );
  }

  /**
   * Brings `component` to a version that meets `requirement`, syncing from the weights hash when
   * needed (a job never runs on older weights than it requires). Waits at most `waitMs`.
   * @throws FlowfleetError WORKER_WEIGHTS_UNAVAILABLE when the version cannot be reached
   */
  async ensure(
    component: string,
    requirement: ResolvedWeightRequirement,
    waitMs: number,
    signal?: AbortSignal,
  ): Promise<void> {
    const { target } = this.#options;
    const deadline = Date.now() + waitMs;
    let lastReason = 'no synced version meets it yet';
    for (let delayMs = 100; ; delayMs = Math.min(delayMs * 2, 2_000)) {
      const held = target.held()[component];
      if (isWeightRequirementMet(held, requirement)) return;
      const unavailable = (reason: string): FlowfleetError =>
        new FlowfleetError(
          'WORKER_WEIGHTS_UNAVAILABLE',
          `${component}: cannot reach ${JSON.stringify(requirement)} (holds ${held ?? 'none'}): ${reason}`,
          { details: { component, requirement, held: held ?? null, reason } },
        );
      if (held === undefined) throw unavailable('this worker has no such component');
      if ('exact' in requirement && held > requirement.exact) {
        throw unavailable('versions only increase, and this worker already holds a newer one');
      }
      const sync = await this.#versionToReach(component, requirement);
      if (sync !== undefined) {
        const outcome = await this.apply(sync);
        if (outcome === 'refused') {
          throw unavailable(this.#refused.get(`${component}@${sync.version}`) ?? 'refused');
        }
        if (outcome === 'ok' || outcome === 'stale') continue;
        lastReason = `syncing version ${sync.version} ${outcome === 'failed' ? 'failed' : 'was skipped'}`;
      }
      if (Date.now() + delayMs > deadline) throw unavailable(lastReason);
      await delay(delayMs, undefined, signal === undefined ? {} : { signal });
    }
  }

  /**
   * Applies one sync: fetch, verify, stage, ack. Runs after any sync of the same component.
   */
  apply(sync: WeightSync): Promise<SyncOutcome> {
    const previous = this.#chains.get(sync.component) ?? Promise.resolve();
    const run = async (): Promise<SyncOutcome> => {
      const outcome = await this.#applyNow(sync);
      const failed = this.#failed.get(sync.component);
      if (outcome === 'failed' && (failed === undefined || failed.version <= sync.version)) {
        this.#failed.set(sync.component, sync);
      } else if (outcome !== 'failed' && failed !== undefined && failed.version <= sync.version) {
        this.#failed.delete(sync.component);
      }
      return outcome;
    };
    const next = previous.then(run, run);
    this.#chains.set(sync.component, next);
    return next;
  }

  /** Stops downloads in flight and waits for syncs to settle. Idempotent. */
  async close(): Promise<void> {
    this.#abort.abort(new Error('the worker is closing'));
    await Promise.allSettled([...this.#chains.values()]);
  }

  /**
   * Parses a sync under the published limits, read again when they refuse it (published limits
   * only widen, so a kept copy can only be too strict).
   */
  async #parseSync(value: unknown): Promise<z.ZodSafeParseResult<WeightSync>> {
    const { limits } = this.#options;
    const parsed = weightSyncSchema(await limits.current()).safeParse(value);
    return parsed.success ? parsed : weightSyncSchema(await limits.refresh()).safeParse(value);
  }

  /** The published limits, read again when the kept ones would not admit `sizeBytes`. */
  async #limitsAdmitting(sizeBytes: number): Promise<Limits> {
    const { limits } = this.#options;
    const kept = await limits.current();
    return kept.maxBlobBytes >= sizeBytes ? kept : limits.refresh();
  }

  async #versionToReach(
    component: string,
    requirement: ResolvedWeightRequirement,
  ): Promise<WeightSync | undefined> {
    const { redis, keys } = this.#options;
    const [currentText] = await redis.hmget(keys.weights(component), 'current');
    const current = Number(currentText ?? 0);
    const version = 'exact' in requirement ? requirement.exact : current;
    if (!Number.isSafeInteger(version) || version < 1) return undefined;
    if ('min' in requirement && version < requirement.min) return undefined;
    const [recordText] = await redis.hmget(keys.weights(component), `v:${version}`);
    const record = VersionRecordSchema.safeParse(parseJson(recordText));
    if (!record.success) return undefined;
    return { component, version, ...record.data };
  }

  async #applyNow(sync: WeightSync): Promise<SyncOutcome> {
    const { target, blobs } = this.#options;
    const { component, version } = sync;
    const logger = this.#options.logger.child({ component, version });
    if (this.#abort.signal.aborted) return 'ignored';
    if (!target.componentIds().includes(component)) return 'ignored';
    const held = target.held()[component] ?? 0;
    if (version <= held) return 'stale';
    const key = `${component}@${version}`;
    if (this.#refused.has(key)) return 'refused';
    let bytes: Uint8Array;
    try {
      const { maxBlobBytes } = await this.#limitsAdmitting(sync.sizeBytes);
      bytes = await blobs.fetchBlob(sync.sha256, maxBlobBytes, this.#abort.signal);
    } catch (error) {
      if (this.#abort.signal.aborted) return 'ignored';
      logger.warn({ err: error }, 'could not fetch a weights blob; staying on the held version');
      await this.#ack(sync, 'failed', (error as Error).message);
      return 'failed';
    }
    let tensors: Map<string, TensorData>;
    try {
      tensors = verifyWeightsBlob(bytes, sync, target.shapes(component));
    } catch (error) {
      if (!isFlowfleetError(error, 'WORKER_BLOB_REFUSED')) throw error;
      this.#refused.set(key, error.message);
      logger.warn(
        { code: error.code, details: error.details },
        `refused weights: ${error.message}`,
      );
      await this.#ack(sync, 'refused', error.message);
      return 'refused';
    }
    let evictedGraphs: number;
    try {
      evictedGraphs =
        (await target.setWeightsVersion(component, version, sync.sha256, tensors)) ?? 0;
    } catch (error) {
      logger.error({ err: error }, 'could not stage a verified weights version');
      await this.#ack(sync, 'failed', (error as Error).message);
      return 'failed';
    }
    await this.#ack(sync, 'ok');
    this.#options.onWeightsChanged();
    logger.info({ previous: held, evictedGraphs }, 'staged a new weights version');
    return 'ok';
  }

  async #ack(sync: WeightSync, status: SyncStatus, reason?: string): Promise<void> {
    const { redis, keys, workerId, logger } = this.#options;
    const ack: SyncAck = {
      workerId,
      component: sync.component,
      version: sync.version,
      status,
      ...(reason === undefined ? {} : { reason: reason.slice(0, 2_000) }),
      at: new Date().toISOString(),
    };
    try {
      await redis.hset(keys.acks(sync.component, sync.version), workerId, JSON.stringify(ack));
    } catch (error) {
      logger.error({ err: error, component: sync.component, version: sync.version }, 'ack failed');
    }
  }
}
