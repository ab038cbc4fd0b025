import type { RolloutSummary } from '@flowfleet/formats';
import type { JobStatus } from '@flowfleet/protocol';
import { weightsText } from './fleet-tables.js';
import { formatMs, shortId } from './numbers.js';
import { renderTable } from './table.js';

/** Σ over steps of one sample's per-step log-probs (the trajectory's log-likelihood). */
export function logProbSum(row: readonly number[]): number {
  return row.reduce((sum, value) => sum + value, 0);
}

/** The backend that ran the forwards: one source, or `component=source` pairs when mixed. */
export function backendName(backend: Readonly<Record<string, string>>): string {
  const sources = [...new Set(Object.values(backend))].sort();
  if (sources.length <= 1) return sources[0] ?? 'unknown';
  return Object.keys(backend)
    .sort()
    .map((component) => `${component}=${backend[component]}`)
    .join(',');
}

/** `graphs: 2 captured, 5 replayed, 0 eager breaks`. */
export function captureText(summary: RolloutSummary): string {
  const stats = summary.captureStats;
  return `graphs: ${stats.captures} captured, ${stats.replays} replayed, ${stats.eagerBreaks} eager breaks`;
}

/** One line on where and how a rollout ran. */
export function rolloutHeadline(summary: RolloutSummary): string {
  const { platform } = summary;
  return (
    `rollout ${shortId(summary.id)} on ${summary.worker} (${backendName(summary.backend)}, ${platform.device} ${platform.arch}), ` +
    `weights ${weightsText(summary.weightsVersions)}`
  );
}

/** The timings line: total and per step. */
export function timingText(summary: RolloutSummary): string {
  const perStep = summary.timings.stepMs.map((ms) => Math.round(ms)).join('/');
  return `${formatMs(summary.timings.totalMs)} total, per step ${perStep} ms`;
}

/** The human report of one completed rollout (`flowfleet rollout`). */
export function rolloutReport(status: JobStatus): string[] {
  const summary = status.summary;
  if (summary === undefined) return [`rollout ${status.id}: ${status.status}`];
  const lines = [
    rolloutHeadline(summary),
    `  ${summary.steps} steps ${summary.sampler}, guidance ${summary.guidanceScale}, noise level ` +
      `${summary.noiseLevel}, shift ${summary.shift}, latent ${summary.latentDims.join('×')}, ` +
      `attempts ${status.attempts}`,
    `  ${timingText(summary)}; ${captureText(summary)}`,
  ];
  const { logProbs } = summary;
  if (logProbs !== null) {
    const rows = summary.seeds.map((seed, i) => {
      // logProbs is step-major ([T][G], as the file's log_probs): sample i is column i.
      const row = logProbs.map((step) => step[i] ?? 0);
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
