import { FlowfleetError } from '@flowfleet/errors';
import type { Fleet, SyncStatus, WeightReport, WeightVersionReport } from '@flowfleet/protocol';
import { abortableSleep } from './abortable-sleep.js';
import { checkPositive } from './client-options.js';
import type { CallOptions } from './http-transport.js';

/** Whom to wait for: at least `minWorkers` live workers, or every live worker (at least one). */
export type SyncTarget = { readonly minWorkers: number } | { readonly all: true };

/** Where a weight version stands across the live fleet. */
export interface SyncProgress {
  readonly component: string;
  readonly version: number;
  /** The coordinator's verdict on the version. */
  readonly status: WeightVersionReport['status'];
  /** Live workers that acked `ok`. */
  readonly okWorkers: readonly string[];
  /** Every live worker. */
  readonly liveWorkers: readonly string[];
  /** Worker id → its ack (live or not). */
  readonly acks: Readonly<Record<string, SyncStatus>>;
  /** Worker id → why it refused or failed. */
  readonly reasons: Readonly<Record<string, string>>;
}

/** How to wait for a weight sync. */
export interface WaitForSyncOptions {
  /** Give up after this long (`CLIENT_TIMEOUT`; default 60 000 ms). */
  readonly timeoutMs?: number;
  /** Aborts the wait (`CLIENT_ABORTED`). */
  readonly signal?: AbortSignal;
  /** Called whenever the progress changes (acks, live workers, status). */
  readonly onUpdate?: (progress: SyncProgress) => void;
  /** Poll interval (default 250 ms). */
  readonly pollMs?: number;
}

/** What waiting needs: the weight report and the fleet. */
export interface SyncStateSource {
  weights(component: string, query?: { limit?: number }, call?: CallOptions): Promise<WeightReport>;
  fleet(call?: CallOptions): Promise<Fleet>;
}

/** Defaults of {@link WaitForSyncOptions}. */
export const WAIT_FOR_SYNC_DEFAULTS = Object.freeze({ timeoutMs: 60_000, pollMs: 250 });

/** The coordinator reports at most this many versions per call. */
const MAX_REPORT_VERSIONS = 100;

function checkTarget(target: SyncTarget): SyncTarget {
  if ('all' in target && target.all === true) return target;
  if ('minWorkers' in target) {
    checkPositive(target.minWorkers, 'minWorkers', true);
    return target;
  }
  throw new FlowfleetError(
    'CLIENT_INVALID_OPTIONS',
    'a sync target is {minWorkers: n} or {all: true}',
    { details: { option: 'target' } },
  );
}

function isMet(target: SyncTarget, progress: SyncProgress): boolean {
  const ok = progress.okWorkers.length;
  if ('minWorkers' in target) return ok >= target.minWorkers;
  return progress.liveWorkers.length > 0 && ok === progress.liveWorkers.length;
}

/**
 * The live workers that refused the version: a refusal is final (the version's bytes or tensors
 * are wrong for that worker), so `{all: true}` can no longer be met while they live.
 */
function refusedBy(progress: SyncProgress): string[] {
  return progress.liveWorkers.filter((id) => progress.acks[id] === 'refused');
}

function progressOf(
  component: string,
  version: number,
  entry: WeightVersionReport,
  fleet: Fleet,
): SyncProgress {
  const liveWorkers = fleet.workers.filter((w) => w.alive).map((w) => w.workerId);
  return {
    component,
    version,
    status: entry.status,
    okWorkers: liveWorkers.filter((id) => entry.acks[id] === 'ok'),
    liveWorkers,
    acks: entry.acks,
    reasons: entry.reasons,
  };
}

/**
 * Polls the weight report and the fleet until `target` live workers acked `version` of
 * `component` ok; resolves with that progress. This is the on-policy fence: once it resolves,
 * the coordinator counts the version as served (`current`), and a rollout that requires it is
 * accepted and runs on it.
 * @throws FlowfleetError CLIENT_SYNC_FAILED (the version failed everywhere, was superseded before
 *   anyone loaded it, or — waiting for all — a live worker refused it), CLIENT_UNKNOWN_VERSION,
 *   CLIENT_TIMEOUT (details.last: the last progress), CLIENT_ABORTED, CLIENT_INVALID_OPTIONS, or
 *   any error of the two reads
 */
export async function waitForSync(
  source: SyncStateSource,
  component: string,
  version: number,
  target: SyncTarget,
  options: WaitForSyncOptions = {},
): Promise<SyncProgress> {
  checkPositive(version, 'version', true);
  checkTarget(target);
  const timeoutMs = checkPositive(
    options.timeoutMs ?? WAIT_FOR_SYNC_DEFAULTS.timeoutMs,
    'timeoutMs',
  );
  const pollMs = checkPositive(options.pollMs ?? WAIT_FOR_SYNC_DEFAULTS.pollMs, 'pollMs');
  const deadline = Date.now() + timeoutMs;
  const { signal } = options;
  const call = signal === undefined ? {} : { signal };
  const name = `${component} v${version}`;
  // Ask only for the versions from the current one down to ours once we know the current one.
  let limit = MAX_REPORT_VERSIONS;
  let lastKey: string | undefined;
  for (;;) {
    const [report, fleet] = await Promise.all([
      source.weights(component, { limit }, call),
      source.fleet(call),
    ]);
    const entry = report.versions[String(version)];
    if (entry === undefined) {
      if (limit < MAX_REPORT_VERSIONS) {
        limit = MAX_REPORT_VERSIONS;
        continue;
      }
      throw new FlowfleetError(
        'CLIENT_UNKNOWN_VERSION',
        `${name} was never synced (latest: ${report.latest?.version ?? 'none'})`,
        { details: { component, version, current: report.current, latest: report.latest } },
      );
    }
    const latest = report.latest?.version ?? version;
    limit = Math.min(MAX_REPORT_VERSIONS, Math.max(1, latest - version + 1));
    const progress = progressOf(component, version, entry, fleet);
    const key = JSON.stringify([progress.status, progress.liveWorkers, progress.acks]);
    if (key !== lastKey) {
      lastKey = key;
      options.onUpdate?.(progress);
    }
    if (isMet(target, progress)) return progress;
    const refused = 'all' in target ? refusedBy(progress) : [];
    if (progress.status === 'failed' || progress.status === 'superseded' || refused.length > 0) {
      const why = (workers: readonly string[]): string =>
        workers.map((worker) => `${worker}: ${progress.reasons[worker] ?? 'refused'}`).join('; ');
      throw new FlowfleetError(
        'CLIENT_SYNC_FAILED',
        progress.status === 'failed'
          ? `${name} failed: no worker could load it (${why(Object.keys(progress.reasons))})`
          : progress.status === 'superseded'
            ? `${name} was superseded by v${latest} before any worker loaded it`
            : `${name}: live workers refused it, so not every live worker can load it (${why(refused)})`,
        { details: { ...progress, current: report.current, latest: report.latest } },
      );
    }
    const remainingMs = deadline - Date.now();
    if (remainingMs <= 0) {
      throw new FlowfleetError(
        'CLIENT_TIMEOUT',
        `${name}: ${progress.okWorkers.length} of ${progress.liveWorkers.length} live workers loaded it within ${timeoutMs} ms`,
        { details: { what: 'waitForSync', timeoutMs, target, last: progress } },
      );
    }
    await abortableSleep(Math.min(pollMs, remainingMs), signal, `waiting for ${name}`);
  }
}
