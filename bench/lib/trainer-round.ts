// One round of rollouts as a trainer runs it through the SDK: enqueue the round over HTTP
// (enqueueRound), then wait for each rollout in order and fetch and read its result file. The
// wall time is first request → last result read; the server's timestamps and the summaries'
// timings say where inside it each job's time went.
import type { FlowfleetClient, RolloutFile, RoundCommon } from '@flowfleet/client';

/** What one rollout of a round looked like. */
export interface RoundJob {
  readonly id: string;
  readonly worker: string;
  /** Server timestamps (epoch ms, BullMQ processedOn / finishedOn). */
  readonly startedAt: number;
  readonly finishedAt: number;
  /** When the trainer had read the result (epoch ms, this process's clock). */
  readonly readAt: number;
  /** `runRollout` on the worker (the summary's `timings.totalMs`). */
  readonly rolloutMs: number;
  /** The denoise steps (sum of `timings.perStepMs`). */
  readonly denoiseMs: number;
}

/** A finished round. */
export interface Round {
  readonly wallMs: number;
  readonly startedAt: number;
  readonly jobs: readonly RoundJob[];
  /** The last result read (for the bit-identity check against the raw loop). */
  readonly lastFile: RolloutFile;
}

/** How the trainer waits (the SDK's waitFor options). */
export interface TrainerPolling {
  /** Each status request's long-poll (0: poll with pollMs/maxPollMs instead). */
  readonly longPollMs: number;
  readonly pollMs: number;
  readonly maxPollMs: number;
}

/** Runs one round of `count` rollouts of `prompt` × `seeds` with `common` settings. */
export async function trainerRound(
  client: FlowfleetClient,
  count: number,
  group: { readonly prompt: string; readonly seeds: readonly number[] },
  common: RoundCommon,
  polling: TrainerPolling,
): Promise<Round> {
  const startedAt = Date.now();
  const started = performance.now();
  const enqueued = await client.enqueueRound(
    Array.from({ length: count }, () => group),
    common,
  );
  const jobs: RoundJob[] = [];
  let lastFile: RolloutFile | undefined;
  for (const { id } of enqueued) {
    const status = await client.waitFor(id, { ...polling, timeoutMs: 120_000 });
    lastFile = await client.getResult(id);
    const summary = status.summary!;
    jobs.push({
      id,
      worker: status.worker ?? summary.worker,
      startedAt: Date.parse(status.startedAt ?? status.createdAt),
      finishedAt: Date.parse(status.finishedAt ?? status.createdAt),
      readAt: Date.now(),
      rolloutMs: summary.timings.totalMs,
      denoiseMs: summary.timings.stepMs.reduce((a, b) => a + b, 0),
    });
  }
  return { wallMs: performance.now() - started, startedAt, jobs, lastFile: lastFile! };
}

/**
 * Steady-state rollouts/s from the server's finish times: completions after the first `workers`
 * (one per worker, so every worker is past its first job) over the time they took. NaN when the
 * round is too short to tell.
 */
export function steadyRate(round: Round, workers: number): number {
  const finished = round.jobs.map((job) => job.finishedAt).sort((a, b) => a - b);
  if (finished.length <= workers) return Number.NaN;
  const span = finished.at(-1)! - finished[workers - 1]!;
  return span > 0 ? ((finished.length - workers) * 1000) / span : Number.NaN;
}
