import { randomUUID } from 'node:crypto';
import type { RedisClient } from '@flowfleet/redis';
import type { Logger } from 'pino';
import type { BlobStore } from '../blob-store.js';
import type { FleetReader } from '../fleet-reader.js';
import type { CoordinatorKeys } from '../keys.js';
import type { LaneQueues } from '../lane-queues.js';
import type { LaneRegistry } from '../lane-registry.js';
import type { RolloutService } from '../rollout-service.js';
import type { RetentionSettings } from './retention-settings.js';
import { collectWeights, type WeightGcReport } from './weight-gc.js';

/** Job states in which a job may still run: what it needs (results, weights) stays. */
const UNFINISHED_STATES = [
  'waiting',
  'active',
  'delayed',
  'prioritized',
  'waiting-children',
] as const;
/** The same states as `getJobs` names them. */
const UNFINISHED_JOB_TYPES = ['wait', 'active', 'delayed', 'prioritized'] as const;
/** Jobs read (or removed) per call. */
const PAGE = 1_000;
/** The sweep lock's TTL: longer than any sweep, short enough to outlive a dead sweeper briefly. */
const LOCK_TTL_MS = 10 * 60_000;
// KEYS: the lock; ARGV: this sweep's token. Deletes the lock only while this sweep holds it.
const RELEASE_LOCK = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/** What the sweeper works on. */
export interface RetentionSweeperOptions {
  readonly redis: RedisClient;
  readonly keys: CoordinatorKeys;
  readonly blobs: BlobStore;
  readonly queues: LaneQueues;
  readonly lanes: LaneRegistry;
  readonly fleet: FleetReader;
  readonly rollouts: RolloutService;
  readonly settings: RetentionSettings;
  readonly logger: Logger;
  /** The clock (tests pass their own). */
  readonly now?: () => number;
}

/** What one sweep did (`skipped`: another coordinator held the sweep lock). */
export interface SweepReport {
  readonly skipped: boolean;
  readonly removedJobs: number;
  readonly removedResults: number;
  readonly freedResultBytes: number;
  readonly weights: WeightGcReport;
}

const NOTHING: WeightGcReport = { forgottenVersions: 0, deletedBlobs: 0, freedBytes: 0 };

/**
 * Bounds what a fleet that runs for weeks accumulates, one sweep every `sweepIntervalMs` per
 * coordinator, never two at once across the fleet (a lock key): finished BullMQ jobs past their age (BullMQ trims only when
 * another job of the same lane finishes), result files past theirs once the job is finished,
 * superseded weight versions and unreferenced blobs (weight-gc.ts), and long-dead workers (the
 * fleet reader's pruning).
 */
export class RetentionSweeper {
  readonly #options: RetentionSweeperOptions;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<SweepReport> | undefined;
  #closed = false;

  constructor(options: RetentionSweeperOptions) {
    this.#options = options;
  }

  /** Sweeps every interval from now on (the first one after one interval). */
  start(): void {
    if (this.#closed || this.#timer !== undefined) return;
    const tick = (): void => {
      this.#timer = setTimeout(() => {
        void this.sweep()
          .catch((error: unknown) =>
            this.#options.logger.error({ err: error }, 'retention sweep failed'),
          )
          .finally(() => {
            if (!this.#closed) tick();
          });
      }, this.#options.settings.sweepIntervalMs);
      this.#timer.unref();
    };
    tick();
  }

  /** Stops sweeping and waits for a sweep under way. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#running?.catch(() => undefined);
  }

  /** One sweep now (a sweep under way is joined, not doubled). */
  sweep(): Promise<SweepReport> {
    this.#running ??= this.#sweep().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #sweep(): Promise<SweepReport> {
    const { redis, keys, settings } = this.#options;
    const token = randomUUID();
    // Held while this sweep runs (and released after); its TTL frees it if this process dies.
    const locked = await redis.set(keys.retentionLock, token, 'PX', LOCK_TTL_MS, 'NX');
    if (locked !== 'OK') {
      return {
        skipped: true,
        removedJobs: 0,
        removedResults: 0,
        freedResultBytes: 0,
        weights: NOTHING,
      };
    }
    try {
      const now = (this.#options.now ?? Date.now)();
      // Pruning dead workers first: their manifests then no longer count as holding weights.
      await this.#options.fleet.workers();
      const removedJobs = await this.#cleanJobs();
      const results = await this.#removeResults(now);
      const weights = await collectWeights(
        {
          redis,
          keys,
          blobs: this.#options.blobs,
          logger: this.#options.logger,
          heldVersions: () => this.#heldVersions(),
          pinnedVersions: () => this.#pinnedVersions(),
          versionsKept: settings.weightVersionsKept,
          graceMs: settings.weightGraceSeconds * 1000,
        },
        now,
      );
      return { skipped: false, removedJobs, ...results, weights };
    } finally {
      await redis.eval(RELEASE_LOCK, 1, keys.retentionLock, token);
    }
  }

  /** Removes finished jobs past the job retention from every lane. */
  async #cleanJobs(): Promise<number> {
    const graceMs = this.#options.settings.jobRetentionSeconds * 1000;
    let removed = 0;
    for (const { lane } of await this.#options.lanes.list()) {
      const queue = this.#options.queues.get(lane);
      for (const state of ['completed', 'failed'] as const) {
        for (;;) {
          const ids = await queue.clean(graceMs, PAGE, state);
          removed += ids.length;
          if (ids.length < PAGE) break;
        }
      }
    }
    return removed;
  }

  /** Deletes result files past the result retention whose job can no longer run. */
  async #removeResults(now: number): Promise<{ removedResults: number; freedResultBytes: number }> {
    const retentionMs = this.#options.settings.resultRetentionSeconds * 1000;
    let removedResults = 0;
    let freedResultBytes = 0;
    for await (const entry of this.#options.blobs.listResults()) {
      if (now - entry.storedAtMs < retentionMs) continue;
      if (!(await this.#isFinished(entry.name))) continue;
      await this.#options.blobs.deleteResult(entry.name);
      removedResults += 1;
      freedResultBytes += entry.sizeBytes;
    }
    return { removedResults, freedResultBytes };
  }

  /** True unless BullMQ holds job `id` in a state from which it may run (and upload) again. */
  async #isFinished(id: string): Promise<boolean> {
    const lane = await this.#options.rollouts.laneOf(id);
    if (lane === undefined) return true;
    const state = await this.#options.queues.get(lane).getJobState(id);
    return !(UNFINISHED_STATES as readonly string[]).includes(state);
  }

  async #heldVersions(): Promise<Map<string, Set<number>>> {
    const held = new Map<string, Set<number>>();
    // A fresh read, not the fleet's shared snapshot (up to a second old): a worker that has just
    // registered holding a version must keep it.
    const live = (await this.#options.fleet.read()).filter((view) => view.alive);
    for (const worker of live) {
      for (const [component, version] of Object.entries(worker.manifest.weights)) {
        held.set(component, (held.get(component) ?? new Set()).add(version));
      }
    }
    return held;
  }

  async #pinnedVersions(): Promise<Map<string, Set<number>>> {
    const pinned = new Map<string, Set<number>>();
    for (const { lane } of await this.#options.lanes.list()) {
      const queue = this.#options.queues.get(lane);
      for (let start = 0; ; start += PAGE) {
        const jobs = await queue.getJobs([...UNFINISHED_JOB_TYPES], start, start + PAGE - 1);
        for (const job of jobs) {
          // Untrusted data, read only to keep more: anything that is not `{exact: n}` pins nothing.
          const weights = (job?.data as { weights?: unknown } | undefined)?.weights;
          if (typeof weights !== 'object' || weights === null) continue;
          for (const [component, requirement] of Object.entries(weights)) {
            const exact = (requirement as { exact?: unknown } | null)?.exact;
            if (typeof exact === 'number' && Number.isSafeInteger(exact)) {
              pinned.set(component, (pinned.get(component) ?? new Set()).add(exact));
            }
          }
        }
        if (jobs.length < PAGE) break;
      }
    }
    return pinned;
  }
}
