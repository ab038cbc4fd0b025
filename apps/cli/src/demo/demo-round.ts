import type { FlowfleetClient, RoundGroup } from '@flowfleet/client';
import { FlowfleetError } from '@flowfleet/errors';
import type { RolloutSummary } from '@flowfleet/formats';
import type { JobStatus } from '@flowfleet/protocol';
import { shortId } from '../format/numbers.js';
import type { ProgressBoard } from '../format/progress-board.js';
import { backendName, logProbSum } from '../format/rollout-report.js';
import { trackRollouts } from '../commands/track-rollouts.js';
import { channelZeroMean, groupAdvantages } from './grpo.js';

/** One sample of a demo rollout. */
export interface DemoSample {
  readonly seed: number;
  /** Per-step log-probs (from the result's `log_probs` tensor). */
  readonly logProbs: readonly number[];
  readonly logProbSum: number;
  readonly reward: number;
  readonly advantage: number;
}

/** One rollout (a prompt × its group) of a demo round. */
export interface DemoRollout {
  readonly id: string;
  readonly prompt: string;
  readonly worker: string;
  readonly backend: string;
  readonly weights: Readonly<Record<string, number>>;
  readonly totalMs: number;
  readonly perStepMs: readonly number[];
  readonly captureStats: RolloutSummary['captureStats'];
  readonly samples: readonly DemoSample[];
}

/** What a round is run with. */
export interface DemoRoundOptions {
  readonly client: FlowfleetClient;
  /** The model card id every rollout runs. */
  readonly model: string;
  readonly groups: readonly RoundGroup[];
  readonly steps: number;
  /** The dit version every rollout must run on (an exact weight requirement). */
  readonly ditVersion: number;
  readonly board: ProgressBoard;
  readonly signal: AbortSignal;
}

/** The demo's small latent: 2 frames of 8×8 (fast on 2 cores). */
export const DEMO_SHAPE = Object.freeze({ frames: 2, height: 8, width: 8 });

function summaryOf(status: JobStatus): RolloutSummary {
  if (status.summary === undefined) {
    throw new FlowfleetError(
      'CLI_DEMO_CHECK_FAILED',
      `rollout ${status.id} completed without a summary`,
      {
        details: { id: status.id },
      },
    );
  }
  return status.summary;
}

/**
 * Runs one FlowGRPO-style round: enqueues every group (SDE, on exactly `ditVersion`), follows the
 * rollouts on the board, fetches each result and computes per-sample log-prob sums, rewards and
 * group-normalised advantages.
 * @throws FlowfleetError CLI_DEMO_CHECK_FAILED when a rollout ran on another dit version; the
 *   client's codes (CLIENT_JOB_FAILED, …)
 */
export async function runDemoRound(options: DemoRoundOptions): Promise<DemoRollout[]> {
  const { client, model, groups, steps, ditVersion, board, signal } = options;
  const enqueued = await client.enqueueRound(
    groups,
    {
      model,
      steps,
      sampler: 'sde',
      shape: { ...DEMO_SHAPE },
      weights: { dit: { exact: ditVersion } },
    },
    { signal },
  );
  const statuses = await trackRollouts(
    client,
    enqueued.map((rollout, i) => ({
      id: rollout.id,
      label: `v${ditVersion} ${shortId(rollout.id)} ${(groups[i]?.prompt ?? '').slice(0, 22).padEnd(22)}`,
      steps,
    })),
    board,
    signal,
  );
  return Promise.all(
    statuses.map(async (status, i) => {
      const summary = summaryOf(status);
      if (summary.weightsVersions['dit'] !== ditVersion) {
        throw new FlowfleetError(
          'CLI_DEMO_CHECK_FAILED',
          `rollout ${status.id} ran on dit v${summary.weightsVersions['dit']}, not the required v${ditVersion}`,
          { details: { id: status.id, weights: summary.weightsVersions } },
        );
      }
      const file = await client.getResult(status.id, { signal });
      const rewards = file.seeds.map((_, sample) =>
        channelZeroMean(file.finalLatent(sample), file.latentDims),
      );
      const advantages = groupAdvantages(rewards);
      const samples = file.seeds.map((seed, sample) => {
        const logProbs = Array.from(file.logProbsOf(sample) ?? []);
        return {
          seed,
          logProbs,
          logProbSum: logProbSum(logProbs),
          reward: rewards[sample] ?? 0,
          advantage: advantages[sample] ?? 0,
        };
      });
      return {
        id: status.id,
        prompt: groups[i]?.prompt ?? summary.prompt,
        worker: summary.worker,
        backend: backendName(summary.backend),
        weights: summary.weightsVersions,
        totalMs: summary.timings.totalMs,
        perStepMs: summary.timings.stepMs,
        captureStats: summary.captureStats,
        samples,
      };
    }),
  );
}
