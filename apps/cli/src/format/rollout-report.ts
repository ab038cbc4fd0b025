import type { JobStatus, RolloutSummary } from '@flowfleet/protocol';
import { weightsText } from './fleet-tables.js';
import { formatMs, shortId } from './numbers.js';
import { renderTable } from './table.js';

/** Σ over steps of one sample's per-step log-probs (the trajectory's log-likelihood). */
export function logProbSum(row: readonly number[]): number {
  return row.reduce((sum, value) => sum + value, 0);
}

/** `graphs: 2 captured, 5 replayed, 0 eager breaks` (absent stats: `graphs: -`). */
export function captureText(summary: RolloutSummary): string {
  const stats = summary.captureStats;
  if (stats === undefined) return 'graphs: -';
  return `graphs: ${stats.captures} captured, ${stats.replays} replayed, ${stats.eagerBreaks} eager breaks`;
}

/** One line on where and how a rollout ran. */
export function rolloutHeadline(summary: RolloutSummary): string {
  const { platform } = summary;
  return (
    `rollout ${shortId(summary.id)} on ${summary.worker} (${summary.backend}, ${platform.device} ${platform.arch}), ` +
    `weights ${weightsText(summary.weights)}`
  );
}

/** The timings line: total and per step. */
export function timingText(summary: RolloutSummary): string {
  const perStep = summary.timings.perStepMs.map((ms) => Math.round(ms)).join('/');
  return `${formatMs(summary.timings.totalMs)} total, per step ${perStep} ms`;
}

/** The human report of one completed rollout (`flowfleet rollout`). */
export function rolloutReport(status: JobStatus): string[] {
  const summary = status.summary;
  if (summary === undefined) return [`rollout ${status.id}: ${status.status}`];
  const { shape } = summary;
  const lines = [
    rolloutHeadline(summary),
    `  ${summary.steps} steps ${summary.sampler}, guidance ${summary.guidanceScale}, noise level ` +
      `${summary.noiseLevel}, shift ${summary.shift}, latent ${shape.frames}×${shape.height}×${shape.width}, ` +
      `attempts ${status.attempts}`,
    `  ${timingText(summary)}; ${captureText(summary)}`,
  ];
  if (summary.sampler === 'sde') {
    const rows = summary.seeds.map((seed, i) => {
      const row = summary.logProbs[i] ?? [];
      return [seed, logProbSum(row).toFixed(4), row.map((v) => v.toFixed(3)).join(' ')];
    });
    lines.push(
      ...renderTable(['seed', 'Σ log-prob', 'per-step log-probs'], rows, {
        align: ['right', 'right', 'left'],
      }),
    );
  } else {
    lines.push(`  seeds ${summary.seeds.join(', ')} (ode: no log-probs)`);
  }
  return lines;
}
