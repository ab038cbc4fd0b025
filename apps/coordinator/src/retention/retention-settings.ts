/**
 * How long the coordinator keeps what a long-running fleet accumulates (README "Retention").
 * Every bound has a documented default and an env variable (apps/coordinator/src/env.ts).
 */
export interface RetentionSettings {
  /** Finished (completed or failed) BullMQ jobs older than this are removed; also the Idempotency-Key TTL. */
  readonly jobRetentionSeconds: number;
  /** At most this many finished jobs per lane and state are kept, whatever their age. */
  readonly jobsKept: number;
  /** Result files (results/<jobId>/) older than this are removed once their job is finished. */
  readonly resultRetentionSeconds: number;
  /** The newest this-many versions of each component are always kept (the latest one among them). */
  readonly weightVersionsKept: number;
  /**
   * A superseded version (and an uploaded blob no version names) younger than this is kept: a
   * worker may still be fetching it, a trainer may be about to sync it.
   */
  readonly weightGraceSeconds: number;
  /** Each lane's BullMQ event stream is trimmed to about this many entries (BullMQ's default). */
  readonly eventsMaxLen: number;
  /** How often one coordinator of the fleet sweeps (the others skip while it holds the lock). */
  readonly sweepIntervalMs: number;
}

/** The defaults: a week of jobs and results, 4 versions per component, a sweep a minute. */
export const DEFAULT_RETENTION: RetentionSettings = Object.freeze({
  jobRetentionSeconds: 7 * 24 * 3600,
  jobsKept: 100_000,
  resultRetentionSeconds: 7 * 24 * 3600,
  weightVersionsKept: 4,
  weightGraceSeconds: 600,
  eventsMaxLen: 10_000,
  sweepIntervalMs: 60_000,
});
