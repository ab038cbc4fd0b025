import { manifestSatisfies, type Requirements } from '@flowfleet/protocol';
import type { RedisClient } from '@flowfleet/redis';
import type { FleetReader, WorkerView } from './fleet-reader.js';
import { fleetDigest } from './fleet-views.js';
import type { CoordinatorKeys } from './keys.js';

/** One live worker's verdict on a job's requirements. */
export interface WorkerVerdict {
  readonly workerId: string;
  readonly ok: boolean;
  readonly reasons: readonly string[];
}

function holderOf({ workerId, manifest }: WorkerView): {
  workerId: string;
  weights: Record<string, number>;
} {
  return { workerId, weights: manifest.weights };
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
  /**
   * The eligible workers' ids and held weight versions (from the same read), when asked for:
   * what the weight requirements of a job on the lane are judged against.
   */
  readonly holders?: readonly { workerId: string; weights: Record<string, number> }[];
}

/** What the capacity view needs. */
export interface FleetCapacityOptions {
  readonly fleet: FleetReader;
  readonly redis: RedisClient;
  readonly keys: CoordinatorKeys;
}

/**
 * How many of a lane's eligible workers have their heartbeat checked on each enqueue: all of them
 * in a small fleet, a bounded sample in a large one (an EXISTS of 10 000 keys per enqueue cost
 * more than the enqueue).
 */
export const LIVENESS_SAMPLE = 16;

/**
 * The enqueue path's answer to "can a live worker serve this lane?". The eligible workers come
 * from the fleet reader's shared read (at most a second old; judged once per read and lane by the
 * fleet digest), and the heartbeats of up to LIVENESS_SAMPLE of them are checked now with one
 * `EXISTS`: a small fleet's count is exact, a large one's is the read's count less the sampled
 * workers that died since. A "no" is never answered from the shared read: it is decided on a
 * fresh one (a worker that registered a moment ago counts), which also yields every live
 * worker's reasons.
 */
export class FleetCapacity {
  readonly #options: FleetCapacityOptions;

  constructor(options: FleetCapacityOptions) {
    this.#options = options;
  }

  /**
   * How many live workers can serve `lane` now (with every verdict when none can); with
   * `withHolders`, also which they are and the weight versions they hold (a scan of the read's
   * workers: asked only by a request that names weight requirements).
   */
  async check(
    lane: string,
    requirements: Requirements,
    withHolders = false,
  ): Promise<CapacityCheck> {
    const { fleet, redis, keys } = this.#options;
    const workers = await fleet.workers();
    const digest = fleetDigest(workers);
    const { eligibleWorkers, groups } = digest.eligibility(lane, requirements);
    if (eligibleWorkers > 0) {
      const sample: string[] = [];
      for (let i = 0; i < workers.length && sample.length < LIVENESS_SAMPLE; i += 1) {
        if (groups.has(digest.groupOf[i]!)) sample.push(keys.heartbeat(workers[i]!.workerId));
      }
      const live = await redis.exists(...sample);
      if (live > 0) {
        const eligible = eligibleWorkers - (sample.length - live);
        if (!withHolders) return { eligible };
        const views = workers.filter((w, i) => w.alive && groups.has(digest.groupOf[i]!));
        return { eligible, holders: views.map(holderOf) };
      }
    }
    const fresh = await fleet.read();
    const verdicts = judgeWorkers(fresh, requirements);
    const ok = new Set(verdicts.filter((verdict) => verdict.ok).map((v) => v.workerId));
    return {
      eligible: ok.size,
      verdicts,
      ...(withHolders
        ? { holders: fresh.filter((w) => w.alive && ok.has(w.workerId)).map(holderOf) }
        : {}),
    };
  }
}
