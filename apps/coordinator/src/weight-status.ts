import type {
  ResolvedWeightRequirement,
  SyncStatus,
  VersionStatus,
  WeightRequirement,
} from '@flowfleet/protocol';

/** A live worker as the weight views see it: what its manifest says it holds of the component. */
export interface HoldingWorker {
  readonly workerId: string;
  /** Its manifest's version of the component; undefined when it has no such component. */
  readonly held: number | undefined;
}

/** Per version: each worker's ack status. */
export type AcksByVersion = ReadonlyMap<number, Readonly<Record<string, SyncStatus>>>;

/**
 * The version a worker serves now: what its manifest says, or a newer version it acked `ok` since
 * (a worker acks after staging; the fleet read the manifest came from may be a second old).
 */
export function servedBy(worker: HoldingWorker, acks: AcksByVersion): number | undefined {
  if (worker.held === undefined) return undefined;
  let served = worker.held;
  for (const [version, byWorker] of acks) {
    if (version > served && byWorker[worker.workerId] === 'ok') served = version;
  }
  return served;
}

/**
 * Where a version stands across the live fleet (protocol's VersionStatus): `loaded` while a live
 * worker serves it, `retired` once workers loaded it and none that is live serves it any more,
 * `failed` when every live worker that answered refused or failed it and none is still to answer,
 * `superseded` when a newer version came before anyone loaded it, else `pending`.
 */
export function versionStatus(
  acks: Readonly<Record<string, SyncStatus>>,
  holders: readonly string[],
  liveWorkers: readonly string[],
  superseded: boolean,
): VersionStatus {
  if (holders.length > 0) return 'loaded';
  const statuses = Object.values(acks);
  if (statuses.includes('ok')) return 'retired';
  const livePending = liveWorkers.some((workerId) => acks[workerId] === undefined);
  if (statuses.length > 0 && !livePending) return 'failed';
  return superseded ? 'superseded' : 'pending';
}

/** A component's synced versions as the edge judges a requirement against them. */
export interface ComponentState {
  /** The newest synced version (0: none). */
  readonly latest: number;
  /** Versions with a readable record (the ones a worker can load). */
  readonly recorded: ReadonlySet<number>;
  /** Acks of the versions the judgement needs (see versionsToJudge). */
  readonly acks: AcksByVersion;
}

/** How a requirement fares: resolved for the job, or why no live worker can serve it. */
export type Judgement =
  | { readonly ok: true; readonly resolved?: ResolvedWeightRequirement }
  | { readonly ok: false; readonly reason: string; readonly current: number | null };

/** The versions whose acks a judgement reads: recorded ones above what some eligible worker holds. */
export function versionsToJudge(
  recorded: ReadonlySet<number>,
  eligible: readonly HoldingWorker[],
  cap = 16,
): number[] {
  const floor =
    eligible.length === 0 ? 0 : Math.min(...eligible.map((worker) => worker.held ?? Infinity));
  return [...recorded]
    .filter((version) => version > floor)
    .sort((a, b) => b - a)
    .slice(0, cap);
}

/** True when some worker answered the version and none loaded it (a fresh worker would refuse it too). */
function knownBad(acks: Readonly<Record<string, SyncStatus>> | undefined): boolean {
  if (acks === undefined) return false;
  const statuses = Object.values(acks);
  return statuses.length > 0 && !statuses.includes('ok');
}

/**
 * Judges one weight requirement at enqueue (ADR 012) against the live workers that can run the
 * job (`eligible`) and the component's versions:
 * - `maxStaleness` K becomes `min: current − K`, current being the newest version an eligible
 *   worker serves (with none eligible, the newest recorded version that some worker loaded or none
 *   answered yet); dropped below 1;
 * - `min` m is servable when an eligible worker serves ≥ m, or will load one: a recorded version
 *   ≥ m above what it serves that it has not refused;
 * - `exact` e likewise, for e itself (versions only increase: a worker past e cannot go back).
 * With no eligible worker (a job held for capacity) a recorded version is servable unless every
 * worker that answered it refused or failed it.
 */
export function judgeRequirement(
  requirement: WeightRequirement,
  eligible: readonly HoldingWorker[],
  state: ComponentState,
): Judgement {
  const served = eligible.flatMap((worker) => {
    const version = servedBy(worker, state.acks);
    return version === undefined ? [] : [{ workerId: worker.workerId, version }];
  });
  const loadable = (version: number): boolean =>
    state.recorded.has(version) &&
    (eligible.length === 0
      ? !knownBad(state.acks.get(version))
      : served.some(
          (worker) =>
            worker.version < version && state.acks.get(version)?.[worker.workerId] !== 'refused',
        ));
  const newestServed = served.length === 0 ? null : Math.max(...served.map((w) => w.version));
  const current =
    eligible.length > 0
      ? newestServed
      : ([...state.recorded].sort((a, b) => b - a).find((v) => !knownBad(state.acks.get(v))) ??
        null);
  if ('maxStaleness' in requirement) {
    const min = (current ?? 0) - requirement.maxStaleness;
    return min >= 1 ? { ok: true, resolved: { min } } : { ok: true };
  }
  if (eligible.length > 0 && served.length === 0) {
    return { ok: false, reason: 'no live worker that runs the job has this component', current };
  }
  if ('exact' in requirement) {
    const { exact } = requirement;
    if (served.some((worker) => worker.version === exact) || loadable(exact)) {
      return { ok: true, resolved: requirement };
    }
    const why = !state.recorded.has(exact)
      ? `version ${exact} was never synced (or is forgotten)`
      : eligible.length > 0 && served.every((worker) => worker.version > exact)
        ? `every live worker serves a newer version (versions only increase)`
        : `no live worker can load version ${exact} (refused everywhere it was tried)`;
    return { ok: false, reason: why, current };
  }
  const { min } = requirement;
  if (served.some((worker) => worker.version >= min)) return { ok: true, resolved: requirement };
  const candidates = [...state.recorded].filter((version) => version >= min);
  if (candidates.some(loadable)) return { ok: true, resolved: requirement };
  return {
    ok: false,
    reason:
      candidates.length === 0
        ? `no version ≥ ${min} was synced (latest: ${state.latest || 'none'})`
        : `no live worker can load a version ≥ ${min} (refused everywhere it was tried)`,
    current,
  };
}
