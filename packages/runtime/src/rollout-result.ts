import type { RolloutRecord, RolloutTimings } from '@flowfleet/formats';
import type { CaptureStats } from './capture-stats.js';

/**
 * What one rollout returns: the record (RolloutFile v1, formats' type: the trajectory and
 * everything needed to recompute it, a pure function of job, weights and backend) and the
 * measurements of this attempt, which belong in the summary only.
 */
export interface RolloutResult {
  readonly record: RolloutRecord;
  /** Where this attempt's time went. */
  readonly timings: RolloutTimings;
  /** This rollout's captures, replays and eager-breaks (liveGraphs/bytesHeld: 0). */
  readonly captureStats: CaptureStats;
}
