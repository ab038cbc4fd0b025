import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import type { TensorData } from '@flowfleet/platform';
import type { ModelComponentSpec } from '@flowfleet/models';
import {
  ComponentIdSchema,
  fanoutSourcesOf,
  jsonFromRedis,
  type FanoutPeer,
  type FleetKeys,
  type ResolvedWeightRequirement,
} from '@flowfleet/protocol';
import type { RedisClient } from '@flowfleet/redis';
import type { Logger } from 'pino';
import {
  freshPlan,
  nextVersion,
  readDesiredState,
  recordOf,
  type DesiredState,
} from './desired-state.js';
import { FanoutSession } from './fanout-session.js';
import { writeAck, type AckFacts } from './sync-ack.js';
import type { PeerRangeSource } from './tensor-fetcher.js';
import type { VerifiedRanges } from './verified-ranges.js';
import {
  VersionLoader,
  type HeldVersion,
  type LayerMerger,
  type LoadVia,
  type TensorOrigin,
  type WeightBlobSource,
} from './version-loader.js';
import { WeightWaiters, type Refusal } from './weight-waiters.js';
import { KeyedWorkQueue, type PassResult } from './work-queue.js';

/** Peer fan-out (ADR 009): where verified ranges are kept for peers, and how to reach a peer. */
export interface SyncFanout {
  /** What the worker's peer server serves; absent when it is off (the worker still fetches). */
  readonly ranges?: VerifiedRanges;
  /** A peer's ranges (the SDK client on its `peerUrl`, no retries: the next source is the retry). */
  peer(peer: FanoutPeer): PeerRangeSource;
}

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

/** What `WeightReconciler` needs. */
export interface WeightReconcilerOptions {
  readonly redis: RedisClient;
  readonly keys: FleetKeys;
  readonly workerId: string;
  readonly target: WeightTarget;
  /** Byte ranges and manifests (the coordinator's `GET /v1/blobs/:sha256`, retried by the source). */
  readonly blobs: WeightBlobSource;
  /** The LoRA merge off the event loop (attached to the compute pool on first use). */
  readonly merger: () => Promise<LayerMerger>;
  readonly logger: Logger;
  /** Called after a version is staged (the manifest's weights map changed). */
  readonly onWeightsChanged: () => void;
  /** Fetch from the peers a version's fan-out plan names before the coordinator; default off. */
  readonly fanout?: SyncFanout;
  /** A pass that failed (the coordinator unreachable) is retried after this, doubling (default 200 ms). */
  readonly retryBaseMs?: number;
}

/** Errors that mean the version's bytes or tensors are wrong (refused once, remembered). */
const REFUSALS: ReadonlySet<string> = new Set([
  'WORKER_BLOB_REFUSED',
  'WORKER_WEIGHTS_NOT_FINITE',
  'MODEL_WEIGHTS_MISMATCH',
  'MODEL_LORA_UNBOUND',
  'MODEL_LORA_INVALID',
  'FMT_SAFETENSORS_INVALID',
]);

/**
 * Keeps the worker's weights at the desired state (ADR 012), the controller pattern: every
 * trigger — a sync message, a reconnect, the rescan timer, a job that requires a version — only
 * queues a component; one `reconcile(component)` pass reads the component's whole desired state
 * in one round trip (its weights hash), picks the version to load (`nextVersion`), builds it
 * through the one verified-range layer (`VersionLoader`: deltas, LoRA merges, peers before the
 * coordinator), stages it (the component's graphs are evicted) and acks in `acks(component,
 * version)`. Passes of one component run one at a time and versions only increase. A version whose
 * record, bytes or tensors are wrong is refused once and remembered (the ack names the code); a
 * failed download is acked `failed` and the component is tried again after a backoff.
 */
export class WeightReconciler {
  readonly #options: WeightReconcilerOptions;
  readonly #loader: VersionLoader;
  readonly #queue: KeyedWorkQueue<string>;
  /** Per component: the version whose tensors' origins are known, and those origins. */
  readonly #origins = new Map<
    string,
    { version: number; origins: ReadonlyMap<string, TensorOrigin> }
  >();
  readonly #refused = new Map<string, Refusal>();
  readonly #waiters: WeightWaiters;
  readonly #abort = new AbortController();
  /** Per component: the blobs whose verified ranges the peer server keeps (the staged version's). */
  readonly #servedShards = new Map<string, ReadonlySet<string>>();
  /** Loads in progress (another component's): their ranges are kept too. */
  readonly #sessions = new Set<FanoutSession>();

  constructor(options: WeightReconcilerOptions) {
    this.#options = options;
    this.#loader = new VersionLoader({
      blobs: options.blobs,
      spec: (component) => options.target.spec(component),
      merger: options.merger,
      signal: this.#abort.signal,
    });
    this.#waiters = new WeightWaiters({
      held: (component) => options.target.held()[component],
      refusal: (component, version) => this.#refused.get(`${component}@${version}`),
    });
    this.#queue = new KeyedWorkQueue({
      process: (component) => this.#reconcile(component),
      ...(options.retryBaseMs === undefined ? {} : { baseDelayMs: options.retryBaseMs }),
      logger: options.logger,
    });
  }

  /** A sync message: its component is reconciled (a message that names none is logged, dropped). */
  handleMessage(text: string): void {
    const message = jsonFromRedis(text);
    const parsed = ComponentIdSchema.safeParse(
      typeof message === 'object' && message !== null && 'component' in message
        ? message.component
        : undefined,
    );
    if (!parsed.success) {
      this.#options.logger.warn('ignoring a sync message that names no component');
      return;
    }
    if (this.#options.target.componentIds().includes(parsed.data)) this.#queue.add(parsed.data);
  }

  /**
   * Reconciles every component the worker has (start-up, a reconnect, the rescan timer) and waits
   * until each pass is over (a component that backs off counts as done: it retries on its own).
   */
  async reconcileAll(): Promise<void> {
    const components = this.#options.target.componentIds();
    for (const component of components) this.#queue.add(component);
    await Promise.all(components.map((component) => this.#queue.whenIdle(component)));
  }

  /**
   * Brings `component` to a version that meets `requirement` (a job never runs on older weights
   * than it requires): queues the component and waits at most `waitMs` for a pass to get there.
   * @throws FlowfleetError WORKER_WEIGHTS_UNAVAILABLE when the version cannot be reached
   */
  ensure(
    component: string,
    requirement: ResolvedWeightRequirement,
    waitMs: number,
    signal?: AbortSignal,
  ): Promise<void> {
    return this.#waiters.wait(
      component,
      requirement,
      waitMs,
      () => this.#queue.add(component),
      signal,
    );
  }

  /** Stops downloads in flight, fails waiting jobs' waits and lets passes settle. Idempotent. */
  async close(): Promise<void> {
    this.#abort.abort(new Error('the worker is closing'));
    this.#waiters.endAll('the worker is closing');
    await this.#queue.close();
  }

  /** One pass: read the desired state, load the next version if there is one, ack. */
  async #reconcile(component: string): Promise<PassResult> {
    const { target, redis, keys } = this.#options;
    if (this.#abort.signal.aborted || !target.componentIds().includes(component)) return 'settled';
    const state = await readDesiredState(redis, keys, component);
    const held = target.held()[component] ?? 0;
    const awaited = this.#waiters.requirements(component);
    const version = nextVersion(state, held, awaited, (v) =>
      this.#refused.has(`${component}@${v}`),
    );
    if (version === undefined) {
      this.#waiters.settle(component, state);
      // A job still waits for a version not recorded yet: look again after the backoff.
      return this.#waiters.has(component) ? 'backoff' : 'settled';
    }
    const result = await this.#loadAndStage(component, version, state);
    this.#waiters.settle(component, state);
    if (result === 'failed') {
      this.#waiters.note(component, `syncing version ${version} failed`);
      return 'backoff';
    }
    // Staged the newest version this read knew of: done (a sync since is a trigger of its own).
    // Otherwise — an older version a job awaits exactly, or a refusal — decide again.
    const newest = Math.max(...state.versions.keys());
    if (result !== 'ok' || version !== newest) return 'again';
    // A job still waits for a version not recorded yet: look again after the backoff.
    return this.#waiters.has(component) ? 'backoff' : 'settled';
  }

  /** Loads `version` of `component`, stages it and acks; what became of it. */
  async #loadAndStage(
    component: string,
    version: number,
    state: DesiredState,
  ): Promise<'ok' | 'refused' | 'failed' | 'ignored'> {
    const { target } = this.#options;
    const logger = this.#options.logger.child({ component, version });
    const entry = state.versions.get(version)!;
    if ('unreadable' in entry) {
      const error = new FlowfleetError(
        'WORKER_BLOB_REFUSED',
        `${component} v${version}: ${entry.unreadable}`,
        { details: { reason: 'record', component, version } },
      );
      return this.#refuse(component, version, error, {}, logger);
    }
    const { record } = entry;
    const session = new FanoutSession(this.#options.fanout?.ranges, logger);
    this.#sessions.add(session);
    const ackSources = (): AckFacts => ({ sources: session.facts() });
    const held = target.held()[component] ?? 0;
    try {
      let loaded;
      try {
        loaded = await this.#loader.load(
          component,
          version,
          record,
          this.#heldVersion(component),
          (base) => recordOf(state, base),
          this.#fanoutFor(record, session),
        );
      } catch (error) {
        if (this.#abort.signal.aborted) return 'ignored';
        if (isFlowfleetError(error) && REFUSALS.has(error.code)) {
          return await this.#refuse(component, version, error, ackSources(), logger);
        }
        logger.warn({ err: error }, 'could not fetch a weights version; staying on the held one');
        await this.#ack(component, version, 'failed', {
          reason: (error as Error).message,
          ...(isFlowfleetError(error) ? { code: error.code } : {}),
          ...ackSources(),
        });
        return 'failed';
      }
      // Ranges it did not fetch (reused tensors) are no longer awaited by successors.
      session.settle();
      let evictedGraphs: number;
      try {
        evictedGraphs =
          (await target.setWeightsVersion(component, version, record.sha256, loaded.tensors)) ?? 0;
      } catch (error) {
        logger.error({ err: error }, 'could not stage a verified weights version');
        await this.#ack(component, version, 'failed', {
          reason: (error as Error).message,
          ...ackSources(),
        });
        return 'failed';
      }
      this.#origins.set(component, { version, origins: loaded.origins });
      this.#servedShards.set(component, session.shards);
      this.#options.onWeightsChanged();
      await this.#ack(component, version, 'ok', { loaded, ...ackSources() });
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
    } finally {
      session.settle();
      this.#sessions.delete(session);
      this.#retainServed();
    }
  }

  async #refuse(
    component: string,
    version: number,
    error: FlowfleetError,
    facts: AckFacts,
    logger: Logger,
  ): Promise<'refused'> {
    this.#refused.set(`${component}@${version}`, { code: error.code, message: error.message });
    logger.warn({ code: error.code, details: error.details }, `refused weights: ${error.message}`);
    await this.#ack(component, version, 'refused', {
      reason: error.message,
      code: error.code,
      ...facts,
    });
    return 'refused';
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

  /**
   * The peers this worker fetches the version from, nearest first, and the chunk size, by the
   * record's fan-out plan; none when fan-out is off, the record has no plan or it is stale.
   */
  #fanoutFor(record: Parameters<typeof freshPlan>[0], session: FanoutSession): LoadVia {
    const { fanout, workerId } = this.#options;
    const plan = fanout === undefined ? undefined : freshPlan(record, Date.now());
    if (fanout === undefined || plan === undefined) return { peers: [], observer: session };
    const inChain = plan.chain.some((peer) => peer.workerId === workerId);
    return {
      peers: fanoutSourcesOf(plan, workerId).map((peer) => fanout.peer(peer)),
      // Every link asks for the same chunks, so each can be served on as soon as it verified.
      ...(inChain ? { maxRequestBytes: plan.chunkBytes } : {}),
      observer: session,
    };
  }

  /** Keeps only the verified ranges of the staged versions' blobs for peers. */
  #retainServed(): void {
    const ranges = this.#options.fanout?.ranges;
    if (ranges === undefined) return;
    const keep = new Set([...this.#servedShards.values()].flatMap((set) => [...set]));
    for (const session of this.#sessions) for (const sha256 of session.shards) keep.add(sha256);
    ranges.retain(keep);
  }

  #ack(
    component: string,
    version: number,
    status: 'ok' | 'refused' | 'failed',
    facts: AckFacts,
  ): Promise<void> {
    const { redis, keys, workerId, logger } = this.#options;
    return writeAck({ redis, keys, workerId, logger }, component, version, status, facts);
  }
}
