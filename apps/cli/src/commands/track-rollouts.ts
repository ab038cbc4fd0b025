import type { FlowfleetClient } from '@flowfleet/client';
import type { JobStatus } from '@flowfleet/protocol';
import type { ProgressBoard } from '../format/progress-board.js';

/** One rollout to follow. */
export interface TrackedRollout {
  readonly id: string;
  /** The bar's label. */
  readonly label: string;
  readonly steps: number;
}

/** How long one rollout may take before the wait gives up (CLIENT_TIMEOUT). */
export const ROLLOUT_TIMEOUT_MS = 600_000;

/**
 * Waits for every rollout to complete, showing each one's state and denoise step on `board`.
 * @returns the completed statuses, in the order given
 * @throws FlowfleetError CLIENT_JOB_FAILED, CLIENT_TIMEOUT, CLIENT_ABORTED (on `signal`)
 */
export async function trackRollouts(
  client: FlowfleetClient,
  rollouts: readonly TrackedRollout[],
  board: ProgressBoard,
  signal: AbortSignal,
): Promise<JobStatus[]> {
  for (const rollout of rollouts) {
    board.add(rollout.id, rollout.label, { step: 0, steps: rollout.steps, state: 'queued' });
  }
  const update = (rollout: TrackedRollout, status: JobStatus): void =>
    board.update(rollout.id, {
      step: status.progress.step,
      steps: status.progress.steps,
      state: status.status,
      ...(status.worker === undefined ? {} : { note: status.worker }),
    });
  try {
    return await Promise.all(
      rollouts.map(async (rollout) => {
        const status = await client.waitFor(rollout.id, {
          onProgress: (progress) => update(rollout, progress),
          signal,
          pollMs: 100,
          maxPollMs: 500,
          timeoutMs: ROLLOUT_TIMEOUT_MS,
        });
        update(rollout, status);
        return status;
      }),
    );
  } finally {
    board.finish();
  }
}
