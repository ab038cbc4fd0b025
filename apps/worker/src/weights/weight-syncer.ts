import { setTimeout as delay } from 'node:timers/promises';
import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import type { TensorData } from '@flowfleet/platform';
import type { ModelComponentSpec } from '@flowfleet/models';
import {
  isWeightRequirementMet,
  WeightVersionRecordSchema,
  weightSyncSchema,
  type FleetKeys,
  type FleetLimits,
  type Limits,
  type SyncAck,
  type SyncStatus,
  type ResolvedWeightRequirement,
  type WeightSync,
  type WeightVersionRecord,
} from '@flowfleet/protocol';
import type { RedisClient } from '@flowfleet/redis';
import type { Logger } from 'pino';
import type { z } from 'zod';
import {
  VersionLoader,
  type HeldVersion,
  type LayerMerger,
  type LoadedVersion,
  type TensorOrigin,
  type WeightBlobSource,
} from './version-loader.js';

/** The part of the ModelHost a sync touches. */
export interface WeightTarget {
  componentIds(): readonly string[];
  held(): Readonly<Record<string, number>>;
  /** The card's spec of the component: its shapes and checkpoint key maps. */
  spec(component: string): ModelComponentSpec;
  /** The tensors of the version new rollouts start on. */
  currentTensors(component: string): ReadonlyMap<string, TensorData>;
  setWeightsVersion(
    component: string,
    version: number,
    sha256: string,
    tensors: ReadonlyMap<string, TensorData>,
  ): Promise<number | void>;
}

/** What `WeightSyncer` needs. */
export interface WeightSyncerOptions {
  readonly redis: RedisClient;
  readonly keys: FleetKeys;
  readonly workerId: string;
  readonly target: WeightTarget;
  /** Blobs and byte ranges (the coordinator's `GET /v1/blobs/:sha256`, retried by the source). */
  readonly blobs: WeightBlobSource;
  /** The LoRA merge off the event loop (attached to the compute pool on first use). */
  readonly merger: () => Promise<LayerMerger>;
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

const STREAM_PAGE = 500;

/** Errors that mean the version's bytes or tensors are wrong (refused once, remembered). */
const REFUSALS: ReadonlySet<string> = new Set([
  'WORKER_BLOB_REFUSED',
  'MODEL_WEIGHTS_MISMATCH',
  'MODEL_LORA_UNBOUND',
  'MODEL_LORA_INVALID',
  'FMT_SAFETENSORS_INVALID',
]);

/** What an ack reports besides its status. */
interface AckFacts {
  readonly reason?: string;
  readonly code?: string;
  readonly loaded?: LoadedVersion;
}

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
 * sync newer than what it holds, build the version from its record (`VersionLoader`: only the
 * tensors whose digest differs from the held ones are fetched; a LoRA adapter is merged into its
 * base), stage it (the component's old graphs are evicted), and ack in `acks(component, version)`
 * with what it took (bytes fetched, tensors reused, layers a LoRA bound). Syncs of one component
 * run one at a time and versions only increase. A version whose bytes or tensors are wrong is
 * refused once and remembered (the ack names the code); a failed download is acked `failed` and
 * tried again on the next catch-up.
 */
export class WeightSyncer {
  readonly #options: WeightSyncerOptions;
  readonly #loader: VersionLoader;
  /** Per component: the version whose tensors' origins are known, and those origins. */
  readonly #origins = new Map<
    string,
    { version: number; origins: ReadonlyMap<string, TensorOrigin> }
  >();
  readonly #chains = new Map<string, Promise<unknown>>();
  readonly #refused = new Map<string, string>();
  /** Per component, the newest sync whose download or staging failed: retried on catch-up. */
  readonly #failed = new Map<string, WeightSync>();
  readonly #abort = new AbortController();
  #lastStreamId = '0-0';

  constructor(options: WeightSyncerOptions) {
    this.#options = options;
    this.#loader = new VersionLoader({
      records: (component, version) => this.#record(component, version),
      blobs: options.blobs,
      spec: (component) => options.target.spec(component),
      merger: options.merger,
      maxBlobBytes: async (sizeBytes) => (await this.#limitsAdmitting(sizeBytes)).maxBlobBytes,
      signal: this.#abort.signal,
    });
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
    const record = await this.#record(component, version);
    if (record === undefined) return undefined;
    return { component, version, sha256: record.sha256, sizeBytes: record.sizeBytes };
  }

  /** The coordinator's record of a version (`v:<n>` of the weights hash), if readable. */
  async #record(component: string, version: number): Promise<WeightVersionRecord | undefined> {
    const { redis, keys } = this.#options;
    const [text] = await redis.hmget(keys.weights(component), `v:${version}`);
    const record = WeightVersionRecordSchema.safeParse(parseJson(text));
    return record.success ? record.data : undefined;
  }

  /** What the worker holds of `component`: the current tensors, and their origins when known. */
  #heldVersion(component: string): HeldVersion {
    const { target } = this.#options;
    const version = target.held()[component] ?? 0;
    const known = this.#origins.get(component);
    return {
      version,
      tensors: target.currentTensors(component),
      origins: known?.version === version ? known.origins : new Map(),
    };
  }

  async #applyNow(sync: WeightSync): Promise<SyncOutcome> {
    const { target } = this.#options;
    const { component, version } = sync;
    const logger = this.#options.logger.child({ component, version });
    if (this.#abort.signal.aborted) return 'ignored';
    if (!target.componentIds().includes(component)) return 'ignored';
    const held = target.held()[component] ?? 0;
    if (version <= held) return 'stale';
    const key = `${component}@${version}`;
    if (this.#refused.has(key)) return 'refused';
    let loaded: LoadedVersion;
    try {
      // The record is the coordinator's word; a message without one is read as a whole blob.
      const record = (await this.#record(component, version)) ?? {
        sha256: sync.sha256,
        sizeBytes: sync.sizeBytes,
      };
      loaded = await this.#loader.load(component, version, record, this.#heldVersion(component));
    } catch (error) {
      if (this.#abort.signal.aborted) return 'ignored';
      if (isFlowfleetError(error) && REFUSALS.has(error.code)) {
        this.#refused.set(key, error.message);
        logger.warn(
          { code: error.code, details: error.details },
          `refused weights: ${error.message}`,
        );
        await this.#ack(sync, 'refused', { reason: error.message, code: error.code });
        return 'refused';
      }
      logger.warn({ err: error }, 'could not fetch a weights version; staying on the held version');
      const code = isFlowfleetError(error) ? { code: error.code } : {};
      await this.#ack(sync, 'failed', { reason: (error as Error).message, ...code });
      return 'failed';
    }
    let evictedGraphs: number;
    try {
      evictedGraphs =
        (await target.setWeightsVersion(component, version, sync.sha256, loaded.tensors)) ?? 0;
    } catch (error) {
      logger.error({ err: error }, 'could not stage a verified weights version');
      await this.#ack(sync, 'failed', { reason: (error as Error).message });
      return 'failed';
    }
    this.#origins.set(component, { version, origins: loaded.origins });
    await this.#ack(sync, 'ok', { loaded });
    this.#options.onWeightsChanged();
    logger.info(
      {
        previous: held,
        evictedGraphs,
        fetchedBytes: loaded.fetchedBytes,
        reusedTensors: loaded.reusedTensors,
        ...(loaded.boundLayers === undefined ? {} : { boundLayers: loaded.boundLayers }),
      },
      'staged a new weights version',
    );
    return 'ok';
  }

  async #ack(sync: WeightSync, status: SyncStatus, facts: AckFacts = {}): Promise<void> {
    const { redis, keys, workerId, logger } = this.#options;
    const { reason, code, loaded } = facts;
    const ack: SyncAck = {
      workerId,
      component: sync.component,
      version: sync.version,
      status,
      ...(reason === undefined ? {} : { reason: reason.slice(0, 2_000) }),
      ...(code === undefined ? {} : { code }),
      ...(loaded === undefined
        ? {}
        : {
            fetchedBytes: loaded.fetchedBytes,
            reusedTensors: loaded.reusedTensors,
            ...(loaded.boundLayers === undefined ? {} : { boundLayers: loaded.boundLayers }),
          }),
      at: new Date().toISOString(),
    };
    try {
      await redis.hset(keys.acks(sync.component, sync.version), workerId, JSON.stringify(ack));
    } catch (error) {
      logger.error({ err: error, component: sync.component, version: sync.version }, 'ack failed');
    }
  }
}
