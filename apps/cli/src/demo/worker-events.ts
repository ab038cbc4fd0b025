import type { LogRecord } from '../format/log-line.js';

/** What a worker's log said about one weight version it staged. */
export interface StagedVersion {
  readonly workerId: string;
  /** When the CLI read the line (performance.now()). */
  readonly atMs: number;
  /** Graphs the worker evicted for it, when the worker logs the count. */
  readonly evictedGraphs?: number;
}

/** The message the worker logs once it has staged a synced version (apps/worker weight-syncer). */
const STAGED_MESSAGE = 'staged a new weights version';

/**
 * Follows the workers' structured logs for weight-sync events: which worker staged which
 * `component@version`, when, and (if the worker reports it) how many captured graphs it evicted.
 * The demo shows these beside the coordinator's acks.
 */
export class WorkerEvents {
  readonly #staged = new Map<string, StagedVersion[]>();

  /** A LocalFleet `onLog` consumer. */
  observe(record: LogRecord): void {
    const { fields } = record;
    if (fields['msg'] !== STAGED_MESSAGE) return;
    const { workerId, component, version } = fields;
    if (
      typeof workerId !== 'string' ||
      typeof component !== 'string' ||
      typeof version !== 'number'
    )
      return;
    const evicted = fields['evictedGraphs'] ?? fields['evictions'];
    const key = `${component}@${version}`;
    const list = this.#staged.get(key) ?? [];
    list.push({
      workerId,
      atMs: performance.now(),
      ...(typeof evicted === 'number' ? { evictedGraphs: evicted } : {}),
    });
    this.#staged.set(key, list);
  }

  /** The workers that staged `component@version`, in the order they logged it. */
  staged(component: string, version: number): readonly StagedVersion[] {
    return this.#staged.get(`${component}@${version}`) ?? [];
  }
}
