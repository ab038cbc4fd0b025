import { manifestDigestOf, type WorkerHeartbeat, type WorkerManifest } from '@flowfleet/protocol';
import type { RedisClient } from '@flowfleet/redis';
import type { Logger } from 'pino';
import type { WorkerKeys } from '../keys.js';

/** Load changes closer together than this share one heartbeat write. */
export const LOAD_BEAT_INTERVAL_MS = 200;

/** What the registration reads each time it writes. */
export interface RegistrationOptions {
  readonly redis: RedisClient;
  readonly keys: WorkerKeys;
  readonly workerId: string;
  readonly heartbeatTtlMs: number;
  /** The current manifest (rebuilt when weights change). */
  readonly manifest: () => WorkerManifest;
  /** How busy the worker is now and which lanes it serves. */
  readonly load: () => Pick<WorkerHeartbeat, 'activeJobs' | 'lanes' | 'embedsCacheBytes'>;
  readonly logger: Logger;
}

/**
 * The worker's presence in Redis: its manifest (a plain key, kept after it stops so the
 * coordinator can show it dead), its id in the workers set, and a heartbeat key with a TTL,
 * refreshed every third of the TTL with the current load and the digest of the manifest in Redis
 * (taken up only once a rewrite has landed, so a reader that sees a new digest finds that
 * manifest). The heartbeat is deleted on close so the fleet sees the worker gone at once.
 */
export class WorkerRegistration {
  readonly #options: RegistrationOptions;
  #timer: NodeJS.Timeout | undefined;
  #soonTimer: NodeJS.Timeout | undefined;
  #lastBeatAt = Number.NEGATIVE_INFINITY;
  #closed = false;
  #manifestWrite: Promise<void> = Promise.resolve();
  #manifestDigest: string | undefined;

  constructor(options: RegistrationOptions) {
    this.#options = options;
  }

  /** Writes manifest, set membership and the first heartbeat (in one MULTI), then beats. */
  async start(): Promise<void> {
    const { redis, keys, workerId, heartbeatTtlMs } = this.#options;
    const manifest = JSON.stringify(this.#options.manifest());
    this.#manifestDigest = manifestDigestOf(manifest);
    await redis
      .multi()
      .set(keys.worker(workerId), manifest)
      .sadd(keys.workers, workerId)
      .set(keys.heartbeat(workerId), JSON.stringify(this.#heartbeat()), 'PX', heartbeatTtlMs)
      .exec();
    this.#schedule();
  }

  /** Rewrites the manifest (after a weight sync); writes are serialised, failures logged. */
  refreshManifest(): Promise<void> {
    const { redis, keys, workerId, logger, heartbeatTtlMs } = this.#options;
    this.#manifestWrite = this.#manifestWrite.then(async () => {
      if (this.#closed) return;
      try {
        const manifest = JSON.stringify(this.#options.manifest());
        const previous = this.#manifestDigest;
        // The manifest and a heartbeat naming its digest land together: the coordinator re-reads
        // a manifest only when the heartbeat's digest changes.
        this.#manifestDigest = manifestDigestOf(manifest);
        try {
          await redis
            .multi()
            .set(keys.worker(workerId), manifest)
            .set(keys.heartbeat(workerId), JSON.stringify(this.#heartbeat()), 'PX', heartbeatTtlMs)
            .exec();
        } catch (error) {
          this.#manifestDigest = previous;
          throw error;
        }
      } catch (error) {
        logger.warn({ err: error }, 'could not rewrite the manifest');
      }
    });
    return this.#manifestWrite;
  }

  /**
   * Shows a load change soon: a beat now, or, when one went out less than
   * `LOAD_BEAT_INTERVAL_MS` ago, one beat at the end of that interval for every change in it (a
   * worker finishing thousands of short jobs a second writes a few heartbeats, not thousands).
   */
  beatSoon(): void {
    if (this.#closed || this.#soonTimer !== undefined) return;
    const waitMs = this.#lastBeatAt + LOAD_BEAT_INTERVAL_MS - performance.now();
    if (waitMs <= 0) {
      void this.beat();
      return;
    }
    this.#soonTimer = setTimeout(() => {
      this.#soonTimer = undefined;
      void this.beat();
    }, waitMs);
  }

  /** Refreshes the heartbeat now. */
  async beat(): Promise<void> {
    if (this.#closed) return;
    this.#lastBeatAt = performance.now();
    const { redis, keys, workerId, heartbeatTtlMs, logger } = this.#options;
    try {
      await redis.set(
        keys.heartbeat(workerId),
        JSON.stringify(this.#heartbeat()),
        'PX',
        heartbeatTtlMs,
      );
    } catch (error) {
      logger.warn({ err: error }, 'heartbeat failed');
    }
  }

  /** Stops beating and deletes the heartbeat key. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#soonTimer);
    await this.#manifestWrite;
    const { redis, keys, workerId } = this.#options;
    await redis.del(keys.heartbeat(workerId));
  }

  #heartbeat(): WorkerHeartbeat {
    return {
      workerId: this.#options.workerId,
      at: new Date().toISOString(),
      ...this.#options.load(),
      ...(this.#manifestDigest === undefined ? {} : { manifestDigest: this.#manifestDigest }),
    };
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(
      () => void this.beat().finally(() => this.#schedule()),
      Math.max(100, Math.floor(this.#options.heartbeatTtlMs / 3)),
    );
  }
}
