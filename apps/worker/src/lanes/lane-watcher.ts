import {
  LaneSpecSchema,
  manifestSatisfies,
  type FleetKeys,
  type LaneSpec,
  type WorkerManifest,
  parseRedisJson,
} from '@flowfleet/protocol';
import type { RedisClient } from '@flowfleet/redis';
import type { Logger } from 'pino';

/** What the lane watcher needs. */
export interface LaneWatcherOptions {
  readonly redis: RedisClient;
  readonly keys: FleetKeys;
  /** The worker's current manifest (its capabilities). */
  readonly manifest: () => WorkerManifest;
  /** Starts serving a lane this worker satisfies; a throw makes the next rescan try again. */
  readonly serve: (spec: LaneSpec) => Promise<void>;
  readonly logger: Logger;
}

/**
 * Decides which lanes this worker serves: every lane whose requirements its manifest satisfies
 * (protocol's `manifestSatisfies`, the same rule the coordinator routes by). Lanes arrive on the
 * lane channel as the coordinator records them; `rescan` re-reads the lanes hash as the fallback
 * for announcements missed while disconnected. A lane once served stays served.
 */
export class LaneWatcher {
  readonly #options: LaneWatcherOptions;
  /** Lane → `served`, or why this worker cannot serve it. */
  readonly #verdicts = new Map<string, 'served' | readonly string[]>();

  constructor(options: LaneWatcherOptions) {
    this.#options = options;
  }

  /** The lanes served, sorted. */
  served(): string[] {
    return [...this.#verdicts]
      .filter(([, verdict]) => verdict === 'served')
      .map(([lane]) => lane)
      .sort();
  }

  /** Why this worker does not serve `lane` (undefined when it does or never saw it). */
  reasons(lane: string): readonly string[] | undefined {
    const verdict = this.#verdicts.get(lane);
    return verdict === 'served' ? undefined : verdict;
  }

  /** Handles one lane-channel message (malformed ones are logged and dropped). */
  handleMessage(text: string): void {
    const parsed = parseRedisJson(LaneSpecSchema, text);
    if (!parsed.success) {
      this.#options.logger.warn(
        { issues: parsed.error.issues },
        'ignoring a malformed lane message',
      );
      return;
    }
    void this.consider(parsed.data);
  }

  /** Re-reads every recorded lane. */
  async rescan(): Promise<void> {
    const all = await this.#options.redis.hgetall(this.#options.keys.lanes);
    await Promise.all(
      Object.entries(all).map(async ([lane, json]) => {
        const parsed = parseRedisJson(LaneSpecSchema, json);
        if (!parsed.success || parsed.data.lane !== lane) {
          if (!this.#verdicts.has(lane)) {
            this.#options.logger.warn({ lane }, 'ignoring a malformed lane record');
            this.#verdicts.set(lane, ['the lane record is malformed']);
          }
          return;
        }
        await this.consider(parsed.data);
      }),
    );
  }

  /** Serves `spec` when the manifest satisfies it (once per lane). */
  async consider(spec: LaneSpec): Promise<void> {
    const { logger } = this.#options;
    if (this.#verdicts.get(spec.lane) === 'served') return;
    const verdict = manifestSatisfies(this.#options.manifest(), spec.requirements);
    if (!verdict.ok) {
      if (!this.#verdicts.has(spec.lane)) {
        logger.info({ lane: spec.lane, reasons: verdict.reasons }, 'not serving a lane');
      }
      this.#verdicts.set(spec.lane, verdict.reasons);
      return;
    }
    // Marked first, so a message and a rescan racing on one lane serve it once.
    this.#verdicts.set(spec.lane, 'served');
    try {
      await this.#options.serve(spec);
      logger.info({ lane: spec.lane, requirements: spec.requirements }, 'serving a lane');
    } catch (error) {
      this.#verdicts.delete(spec.lane);
      logger.error({ err: error, lane: spec.lane }, 'could not start serving a lane');
    }
  }
}
