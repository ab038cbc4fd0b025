import {
  manifestDigestOf,
  WorkerHeartbeatSchema,
  WorkerManifestSchema,
  type WorkerHeartbeat,
  type WorkerManifest,
  parseRedisJson,
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
  /**
   * How long `workers()` answers from its last read (default 1 000 ms; 0: always read), at least
   * (READ_DUTY_FACTOR × the last read's duration); past half of it the next read starts in the
   * background.
   */
  readonly maxAgeMs?: number;
  /** The clock (tests pass their own). */
  readonly now?: () => number;
  /**
   * Derives what the views need of a read before `workers()` answers it (the coordinator passes
   * `prepareFleetDigest`), so no query pays for it.
   */
  readonly prepare?: (views: readonly WorkerView[]) => Promise<void>;
}

/**
 * Workers handled between two yields to the event loop: a read of 10 000 workers is tens of ms of
 * work, and in one piece it would stall every request that arrives meanwhile.
 */
export const YIELD_EVERY = 500;

/**
 * A shared read is kept for at least this many times as long as the last read took: a fleet whose
 * read takes 100 ms (10 000 workers on a busy machine) is read every couple of seconds, not twice a
 * second, so reading it never takes more than about a twentieth of the coordinator's time.
 * Liveness is no coarser for it: a heartbeat's TTL is 15 s.
 */
export const READ_DUTY_FACTOR = 20;

/** Lets queued I/O callbacks (requests) run. */
export const yieldToEventLoop = (): Promise<void> =>
  new Promise((resolve) => setImmediate(resolve));

/** Keys per MGET: large enough to be cheap, small enough not to stall Redis. */
const MGET_CHUNK = 1_000;

// KEYS: heartbeat, workers set, manifest, dead-workers hash; ARGV: worker id.
const FORGET_DEAD_WORKER = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SREM', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[3])
redis.call('HDEL', KEYS[4], ARGV[1])
return 1`;

/** A manifest as last read: its JSON, that text's digest, and the parsed value. */
interface KnownManifest {
  readonly text: string;
  readonly digest: string;
  readonly manifest: WorkerManifest;
}

/** A heartbeat as last read (undefined when it was malformed). */
interface KnownBeat {
  readonly text: string;
  readonly beat: WorkerHeartbeat | undefined;
}

/**
 * Reads the fleet from Redis: manifests joined with heartbeats. Redis data is untrusted, so each
 * manifest and heartbeat is validated; a malformed one is logged and the worker left out (or, for
 * a heartbeat, treated as absent). Manifests change rarely and are large, heartbeats change every
 * beat and are small, so a read fetches every heartbeat but only the manifests it does not hold
 * in the form the heartbeat names (`manifestDigest`): new workers, rewritten manifests, and every
 * live worker whose heartbeat names none (older workers). Each text is validated once.
 */
export class FleetReader {
  readonly #options: FleetReaderOptions;
  readonly #maxAgeMs: number;
  readonly #manifests = new Map<string, KnownManifest>();
  readonly #beats = new Map<string, KnownBeat>();
  #snapshot: { readonly at: number; readonly views: WorkerView[] } | undefined;
  /** How long the last shared read took (ms, the reader's clock). */
  #lastReadMs = 0;
  #refreshing: Promise<WorkerView[]> | undefined;

  constructor(options: FleetReaderOptions) {
    this.#options = options;
    this.#maxAgeMs = options.maxAgeMs ?? 1_000;
  }

  /**
   * Every registered worker, sorted by id, from a read at most `maxAgeMs` old — or, in a fleet
   * whose read takes longer than a twentieth of that, READ_DUTY_FACTOR times the last read's
   * duration (concurrent callers share one read); the read prunes long-dead and manifest-less
   * entries. Once the last read is half that old, the next one starts in the background while
   * callers still get the last: a steady stream of callers never waits for a read (one of a
   * 10 000-worker fleet takes long enough to show in every query's latency). Callers must not
   * mutate the answer: it is shared.
   */
  async workers(): Promise<WorkerView[]> {
    const snapshot = this.#snapshot;
    const age = snapshot === undefined ? Infinity : this.#now() - snapshot.at;
    const maxAgeMs = this.maxAgeMs();
    if (snapshot !== undefined && age < maxAgeMs) {
      if (age >= maxAgeMs / 2 && this.#refreshing === undefined) {
        this.#startRefresh().catch((error: unknown) =>
          this.#options.logger.warn({ err: error }, 'a background fleet read failed'),
        );
      }
      return snapshot.views;
    }
    return this.#refreshing ?? this.#startRefresh();
  }

  /** How old an answer of `workers()` may be now: `maxAgeMs`, or more for a slow read. */
  maxAgeMs(): number {
    return this.#maxAgeMs === 0 ? 0 : Math.max(this.#maxAgeMs, READ_DUTY_FACTOR * this.#lastReadMs);
  }

  #startRefresh(): Promise<WorkerView[]> {
    const refreshing = this.#refresh().finally(() => (this.#refreshing = undefined));
    this.#refreshing = refreshing;
    return refreshing;
  }

  /** Every registered worker with a valid manifest, sorted by id: a fresh read, no pruning. */
  async read(): Promise<WorkerView[]> {
    return (await this.#read()).views;
  }

  /** Only the live workers (of `workers()`). */
  async liveWorkers(): Promise<WorkerView[]> {
    return (await this.workers()).filter((view) => view.alive);
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }

  async #refresh(): Promise<WorkerView[]> {
    const at = this.#now();
    const { views, missing } = await this.#read();
    const forgotten = await this.#prune(views, missing);
    const kept =
      forgotten.size === 0 ? views : views.filter((view) => !forgotten.has(view.workerId));
    await this.#options.prepare?.(kept);
    this.#lastReadMs = this.#now() - at;
    this.#snapshot = { at, views: kept };
    return kept;
  }

  async #read(): Promise<{ views: WorkerView[]; missing: string[] }> {
    const { redis, keys } = this.#options;
    const ids = (await redis.smembers(keys.workers)).sort();
    const registered = new Set(ids);
    for (const id of this.#manifests.keys()) if (!registered.has(id)) this.#manifests.delete(id);
    for (const id of this.#beats.keys()) if (!registered.has(id)) this.#beats.delete(id);
    if (ids.length === 0) return { views: [], missing: [] };
    const beatTexts = await this.#mget(ids.map((id) => keys.heartbeat(id)));
    const beats: (WorkerHeartbeat | undefined)[] = [];
    for (let i = 0; i < ids.length; i += 1) {
      if (i > 0 && i % YIELD_EVERY === 0) await yieldToEventLoop();
      beats.push(this.#parseBeat(ids[i]!, beatTexts[i] ?? null));
    }
    const stale = ids.filter((id, i) => {
      const known = this.#manifests.get(id);
      if (known === undefined) return true;
      if (beatTexts[i] === null) return false;
      const digest = beats[i]?.manifestDigest;
      return digest === undefined || digest !== known.digest;
    });
    const texts = await this.#mget(stale.map((id) => keys.worker(id)));
    const missing = new Set<string>();
    stale.forEach((id, i) => {
      const text = texts[i] ?? null;
      if (text === null) {
        this.#manifests.delete(id);
        missing.add(id);
      } else {
        this.#parseManifest(id, text);
      }
    });
    const views: WorkerView[] = [];
    for (let i = 0; i < ids.length; i += 1) {
      if (i > 0 && i % YIELD_EVERY === 0) await yieldToEventLoop();
      const workerId = ids[i]!;
      const known = this.#manifests.get(workerId);
      if (known === undefined || missing.has(workerId)) continue;
      const beat = beats[i];
      views.push({
        workerId,
        alive: beatTexts[i] !== null,
        manifest: known.manifest,
        ...(beat === undefined ? {} : { heartbeat: beat }),
      });
    }
    return { views, missing: [...missing] };
  }

  /** GETs `keys` in chunks of MGET_CHUNK (one round trip: ioredis pipelines them). */
  async #mget(keys: readonly string[]): Promise<(string | null)[]> {
    const chunks: string[][] = [];
    for (let i = 0; i < keys.length; i += MGET_CHUNK) chunks.push(keys.slice(i, i + MGET_CHUNK));
    const replies = await Promise.all(chunks.map((chunk) => this.#options.redis.mget(...chunk)));
    return replies.flat();
  }

  /** A worker's heartbeat, validated once per distinct text; undefined when absent or malformed. */
  #parseBeat(workerId: string, text: string | null): WorkerHeartbeat | undefined {
    if (text === null) {
      this.#beats.delete(workerId);
      return undefined;
    }
    const known = this.#beats.get(workerId);
    if (known?.text === text) return known.beat;
    const parsed = parseRedisJson(WorkerHeartbeatSchema, text);
    if (!parsed.success) {
      this.#options.logger.warn(
        { workerId, issues: parsed.error.issues },
        'ignoring a malformed heartbeat',
      );
    }
    const beat = parsed.success ? parsed.data : undefined;
    this.#beats.set(workerId, { text, beat });
    return beat;
  }

  /** A worker's manifest, validated once per distinct JSON text; undefined when malformed. */
  #parseManifest(workerId: string, text: string): WorkerManifest | undefined {
    const known = this.#manifests.get(workerId);
    if (known?.text === text) return known.manifest;
    const parsed = parseRedisJson(WorkerManifestSchema, text);
    if (!parsed.success || parsed.data.workerId !== workerId) {
      this.#manifests.delete(workerId);
      this.#options.logger.warn(
        { workerId, issues: parsed.error?.issues },
        'ignoring a malformed manifest',
      );
      return undefined;
    }
    this.#manifests.set(workerId, {
      text,
      digest: manifestDigestOf(text),
      manifest: parsed.data,
    });
    return parsed.data;
  }

  /**
   * Forgets ids without a manifest, and workers dead for longer than the retention. The
   * dead-since hash holds only dead workers, so it is read whole and only the differences
   * written: a first death is stamped, a return clears its stamp.
   */
  async #prune(views: readonly WorkerView[], missing: readonly string[]): Promise<Set<string>> {
    const { redis, keys, deadWorkerRetentionMs } = this.#options;
    const now = this.#now();
    const since = await redis.hgetall(keys.deadWorkers);
    const pipeline = redis.pipeline();
    for (const id of missing) pipeline.srem(keys.workers, id).hdel(keys.deadWorkers, id);
    const expired: string[] = [];
    for (const view of views) {
      const stamp = since[view.workerId];
      if (view.alive) {
        if (stamp !== undefined) pipeline.hdel(keys.deadWorkers, view.workerId);
      } else if (stamp === undefined) {
        pipeline.hsetnx(keys.deadWorkers, view.workerId, String(now));
      } else if (now - Number(stamp) > deadWorkerRetentionMs) {
        expired.push(view.workerId);
      }
    }
    if (pipeline.length > 0) {
      for (const [error] of (await pipeline.exec()) ?? []) if (error !== null) throw error;
    }
    const forgotten = new Set<string>();
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
