import { summarizeRollout, writeRolloutFile, type RolloutSummary } from '@flowfleet/formats';
import type { RolloutResult } from '@flowfleet/runtime';

/** The two files a finished rollout job stores. */
export interface RolloutOutput {
  /** `result.safetensors`: the record as a RolloutFile v1. */
  readonly result: Uint8Array;
  /** `summary.json`'s content: derived from the same record, plus this attempt's fields. */
  readonly summary: RolloutSummary;
}

/**
 * The files of job `jobId` from one rollout. The result file holds only the record, which is a
 * pure function of (job, weights, backend): a retried job uploads the same bytes and the
 * coordinator's idempotent write accepts them. What differs per attempt (worker, timings,
 * capture counters) goes in the summary only.
 * @throws FMT_ROLLOUT_INVALID when the record or the summary breaks RolloutFile v1
 */
export function rolloutOutput(
  jobId: string,
  result: RolloutResult,
  workerId: string,
): RolloutOutput {
  return {
    result: writeRolloutFile(result.record),
    summary: summarizeRollout(jobId, result.record, {
      worker: workerId,
      timings: result.timings,
      captureStats: result.captureStats,
    }),
  };
}
