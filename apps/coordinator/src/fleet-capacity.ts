import { manifestSatisfies, type Requirements } from '@flowfleet/protocol';
import type { RedisClient } from '@flowfleet/redis';
import type { FleetReader, WorkerView } from './fleet-reader.js';
import type { CoordinatorKeys } from './keys.js';

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

/** Whether a lane can be served now. */
export interface CapacityCheck {
  /** Live workers that satisfy the lane's requirements. */
  readonly eligible: number;
  /** Every live worker's verdict; only when `eligible` is 0 (the 409 lists them). */
  readonly verdicts?: readonly WorkerVerdict[];
}

/** What the capacity view needs. */
export interface FleetCapacityOptions {
  readonly fleet: FleetReader;
  readonly redis: RedisClient;
  readonly keys: CoordinatorKeys;
  /** How long a read of the registered manifests is reused (default 1 000 ms). */
  readonly maxAgeMs?: number;
  readonly now?: () => number;
}

interface Snapshot {
  readonly at: number;
  readonly workers: readonly WorkerView[];
  /** Lane → ids of the registered workers whose manifest satisfies it (alive or not). */
  readonly eligibleByLane: Map<string, readonly string[]>;
}

/**
 * The enqueue path's answer to "can a live worker serve this lane?" at the cost of one `EXISTS`.
 * Manifests change rarely (start-up, weight syncs), so the registered workers are read and
 * matched against a lane at most once per `maxAgeMs`; liveness changes all the time, so it is
 * checked on every call against the heartbeat keys of the matching workers. A "no" is never
 * answered from the cached read: it is decided on a fresh one (a worker that registered a moment
 * ago counts), which also yields every live worker's reasons.
 */
export class FleetCapacity {
  readonly #options: FleetCapacityOptions;
  readonly #maxAgeMs: number;
  #snapshot: Snapshot | undefined;
  #refreshing: Promise<Snapshot> | undefined;

  constructor(options: FleetCapacityOptions) {
    this.#options = options;
    this.#maxAgeMs = options.maxAgeMs ?? 1_000;
  }

  /** How many live workers can serve `lane` now (with every verdict when none can). */
  async check(lane: string, requirements: Requirements): Promise<CapacityCheck> {
    const cached = await this.#recent();
    const candidates = eligibleIds(cached, lane, requirements);
    if (candidates.length > 0) {
      const { redis, keys } = this.#options;
      const live = await redis.exists(...candidates.map((id) => keys.heartbeat(id)));
      if (live > 0) return { eligible: live };
    }
    const fresh = await this.#read();
    const verdicts = judgeWorkers(fresh.workers, requirements);
    return { eligible: verdicts.filter((verdict) => verdict.ok).length, verdicts };
  }

  /** The cached read when it is recent enough, else a new one (shared by concurrent callers). */
  async #recent(): Promise<Snapshot> {
    const now = (this.#options.now ?? Date.now)();
    const snapshot = this.#snapshot;
    if (snapshot !== undefined && now - snapshot.at < this.#maxAgeMs) return snapshot;
    this.#refreshing ??= this.#read().finally(() => (this.#refreshing = undefined));
    return this.#refreshing;
  }

  async #read(): Promise<Snapshot> {
    const at = (this.#options.now ?? Date.now)();
    const workers = await this.#options.fleet.read();
    const snapshot: Snapshot = { at, workers, eligibleByLane: new Map() };
    if (this.#snapshot === undefined || this.#snapshot.at <= at) this.#snapshot = snapshot;
    return snapshot;
  }
}

function eligibleIds(
  snapshot: Snapshot,
  lane: string,
  requirements: Requirements,
): readonly string[] {
  let ids = snapshot.eligibleByLane.get(lane);
  if (ids === undefined) {
    ids = snapshot.workers
      .filter((worker) => manifestSatisfies(worker.manifest, requirements).ok)
      .map((worker) => worker.workerId);
    snapshot.eligibleByLane.set(lane, ids);
  }
  return ids;
}
