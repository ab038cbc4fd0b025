import {
  WorkerHeartbeatSchema,
  WorkerManifestSchema,
  type WorkerHeartbeat,
  type WorkerManifest,
} from '@flowfleet/protocol';
import type { RedisClient } from '@flowfleet/redis';
import type { Logger } from 'pino';
import type { CoordinatorKeys } from './keys.js';

/** One registered worker as the coordinator sees it. */
export interface WorkerView {
  readonly workerId: string;
  /** True while its heartbeat key exists. */
  readonly alive: boolean;
  readonly manifest: WorkerManifest;
  /** The last heartbeat, when alive. */
  readonly heartbeat?: WorkerHeartbeat;
}

/** What the reader needs: a Redis client, the keys, and when to forget dead workers. */
export interface FleetReaderOptions {
  readonly redis: RedisClient;
  readonly keys: CoordinatorKeys;
  readonly logger: Logger;
  /** A worker dead for longer than this is removed from the registry. */
  readonly deadWorkerRetentionMs: number;
  /** The clock (tests pass their own). */
  readonly now?: () => number;
}

// KEYS: heartbeat, workers set, manifest, dead-workers hash; ARGV: worker id.
const FORGET_DEAD_WORKER = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SREM', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[3])
redis.call('HDEL', KEYS[4], ARGV[1])
return 1`;

function parseJson(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Reads the fleet from Redis: manifests joined with heartbeats. Redis data is untrusted, so each
 * manifest and heartbeat is validated; a malformed one is logged and the worker left out (or, for
 * a heartbeat, treated as absent).
 */
export class FleetReader {
  readonly #options: FleetReaderOptions;
  /** The last manifest read per worker: its JSON and the parsed value (parsed again on change). */
  readonly #manifests = new Map<
    string,
    { readonly text: string; readonly manifest: WorkerManifest }
  >();

  constructor(options: FleetReaderOptions) {
    this.#options = options;
  }

  /** Every registered worker, sorted by id; prunes long-dead and manifest-less entries. */
  async workers(): Promise<WorkerView[]> {
    const { views, missing } = await this.#read();
    const forgotten = await this.#prune(views, missing);
    return views.filter((view) => !forgotten.has(view.workerId));
  }

  /** Every registered worker with a valid manifest, sorted by id, without pruning (no writes). */
  async read(): Promise<WorkerView[]> {
    return (await this.#read()).views;
  }

  async #read(): Promise<{ views: WorkerView[]; missing: string[] }> {
    const { redis, keys, logger } = this.#options;
    const ids = (await redis.smembers(keys.workers)).sort();
    for (const id of this.#manifests.keys()) if (!ids.includes(id)) this.#manifests.delete(id);
    if (ids.length === 0) return { views: [], missing: [] };
    const pipeline = redis.pipeline();
    for (const id of ids) pipeline.get(keys.worker(id)).get(keys.heartbeat(id));
    const replies = (await pipeline.exec()) ?? [];
    const views: WorkerView[] = [];
    const missing: string[] = [];
    ids.forEach((workerId, i) => {
      const [manifestError, manifestText] = replies[2 * i] ?? [null, null];
      const [beatError, beatText] = replies[2 * i + 1] ?? [null, null];
      if (manifestError !== null || beatError !== null) {
        throw manifestError ?? beatError;
      }
      if (manifestText === null) {
        missing.push(workerId);
        return;
      }
      const manifest = this.#parseManifest(workerId, manifestText as string);
      if (manifest === undefined) return;
      const beat =
        beatText === null
          ? undefined
          : WorkerHeartbeatSchema.safeParse(parseJson(beatText as string));
      if (beat !== undefined && !beat.success) {
        logger.warn({ workerId, issues: beat.error.issues }, 'ignoring a malformed heartbeat');
      }
      views.push({
        workerId,
        alive: beatText !== null,
        manifest,
        ...(beat?.success === true ? { heartbeat: beat.data } : {}),
      });
    });
    return { views, missing };
  }

  /** A worker's manifest, validated once per distinct JSON text; undefined when malformed. */
  #parseManifest(workerId: string, text: string): WorkerManifest | undefined {
    const known = this.#manifests.get(workerId);
    if (known?.text === text) return known.manifest;
    const parsed = WorkerManifestSchema.safeParse(parseJson(text));
    if (!parsed.success || parsed.data.workerId !== workerId) {
      this.#manifests.delete(workerId);
      this.#options.logger.warn(
        { workerId, issues: parsed.error?.issues },
        'ignoring a malformed manifest',
      );
      return undefined;
    }
    this.#manifests.set(workerId, { text, manifest: parsed.data });
    return parsed.data;
  }

  /** Only the live workers. */
  async liveWorkers(): Promise<WorkerView[]> {
    return (await this.workers()).filter((view) => view.alive);
  }

  /** Forgets ids without a manifest, and workers dead for longer than the retention. */
  async #prune(views: readonly WorkerView[], missing: readonly string[]): Promise<Set<string>> {
    const { redis, keys, deadWorkerRetentionMs } = this.#options;
    const now = (this.#options.now ?? Date.now)();
    const pipeline = redis.pipeline();
    for (const id of missing) pipeline.srem(keys.workers, id).hdel(keys.deadWorkers, id);
    const dead = views.filter((view) => !view.alive).map((view) => view.workerId);
    for (const view of views) {
      if (view.alive) pipeline.hdel(keys.deadWorkers, view.workerId);
      else pipeline.hsetnx(keys.deadWorkers, view.workerId, String(now));
    }
    if (dead.length > 0) pipeline.hmget(keys.deadWorkers, ...dead);
    const replies = (await pipeline.exec()) ?? [];
    const forgotten = new Set<string>();
    if (dead.length === 0) return forgotten;
    const [error, since] = replies.at(-1) ?? [null, []];
    if (error !== null) throw error;
    const expired = dead.filter((_, i) => {
      const at = Number((since as (string | null)[])[i]);
      return Number.isFinite(at) && now - at > deadWorkerRetentionMs;
    });
    for (const id of expired) {
      // Atomic with the liveness check: a worker that came back meanwhile keeps its manifest.
      const removed = await redis.eval(
        FORGET_DEAD_WORKER,
        4,
        keys.heartbeat(id),
        keys.workers,
        keys.worker(id),
        keys.deadWorkers,
        id,
      );
      if (removed === 1) forgotten.add(id);
    }
    if (forgotten.size > 0) {
      this.#options.logger.info({ workers: [...forgotten] }, 'forgot workers dead past retention');
    }
    return forgotten;
  }
}
