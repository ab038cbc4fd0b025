import type { Fleet, WeightReport } from '@flowfleet/client';
import { line, type CliIo } from '../cli-io.js';
import { acksTable } from '../format/fleet-tables.js';
import { formatMs, signed } from '../format/numbers.js';
import { renderTable, type Cell } from '../format/table.js';
import type { DemoRollout } from './demo-round.js';
import type { DemoSync } from './demo-sync.js';
import type { StagedVersion } from './worker-events.js';

/** How rewards and advantages are defined (printed under each round). */
export const REWARD_LEGEND = [
  '  reward    = mean of latent channel 0 of the final latent x_T (a deterministic stand-in for a reward model)',
  '  advantage = (reward − mean of its group) / (std of its group + 1e-6)   (FlowGRPO group normalisation)',
];

function captureLine(rollout: DemoRollout): string {
  const stats = rollout.captureStats;
  return `graphs: ${stats.captures} captured, ${stats.replays} replayed, ${stats.eagerBreaks} eager breaks`;
}

/** One line per rollout: where it ran, its timings and graph-capture counters. */
export function rolloutLines(rollouts: readonly DemoRollout[]): string[] {
  return rollouts.map((r) => {
    const perStep = r.perStepMs.map((ms) => Math.round(ms)).join('/');
    return `  ${r.id.slice(0, 8)} on ${r.worker} (${r.backend}): ${formatMs(r.totalMs)} for the group, per step ${perStep} ms; ${captureLine(r)}`;
  });
}

/**
 * The per-sample table of a round: Σ log-prob over the steps, reward, advantage; with `previous`
 * (the same prompts and seeds on the older weights) also the change of the reward.
 */
export function samplesTable(
  rollouts: readonly DemoRollout[],
  previous?: readonly DemoRollout[],
): string[] {
  const before = new Map<string, number>();
  for (const r of previous ?? [])
    for (const s of r.samples) before.set(`${r.prompt}#${s.seed}`, s.reward);
  const rows: Cell[][] = [];
  for (const r of rollouts) {
    for (const s of r.samples) {
      const old = before.get(`${r.prompt}#${s.seed}`);
      rows.push([
        r.prompt.length > 26 ? `${r.prompt.slice(0, 25)}…` : r.prompt,
        s.seed,
        r.worker,
        s.logProbSum.toFixed(4),
        signed(s.reward, 4),
        ...(previous === undefined ? [] : [old === undefined ? '-' : signed(s.reward - old, 4)]),
        signed(s.advantage, 3),
      ]);
    }
  }
  const headers = [
    'prompt',
    'seed',
    'worker',
    'Σ log-prob',
    'reward',
    ...(previous === undefined ? [] : ['Δ reward']),
    'advantage',
  ];
  return renderTable(headers, rows);
}

/**
 * Who got a weight version: each worker's ack, the version it now holds, how long after the
 * sync its ack showed, and the graphs it evicted (when its log reports them).
 */
export function syncTable(
  sync: DemoSync,
  report: WeightReport,
  fleet: Fleet,
  staged: readonly StagedVersion[],
): string[] {
  const version = sync.sync.version;
  // The eviction count comes from the worker's log line when the worker reports it.
  const evictions = staged.some((s) => s.evictedGraphs !== undefined);
  return acksTable(
    report,
    version,
    fleet,
    (id) => {
      const ms = sync.ackMs[id];
      const evicted = staged.find((s) => s.workerId === id)?.evictedGraphs;
      return [ms === undefined ? '-' : formatMs(ms), ...(evictions ? [evicted ?? '-'] : [])];
    },
    ['acked after', ...(evictions ? ['graphs evicted'] : [])],
  );
}

/** The demo's numbered sections. */
export const DEMO_SECTIONS = 7;

/** Where the demo writes: human sections (stdout) unless --json, then only the final JSON. */
export interface DemoOutput {
  section(index: number, title: string): void;
  say(text: string): void;
  lines(texts: readonly string[]): void;
}

/** The demo's writer: section headings and lines on stdout; silent under --json. */
export function demoOutput(io: CliIo, json: boolean): DemoOutput {
  const say = json ? () => undefined : (text: string) => line(io.out, text);
  return {
    section: (index, title) => {
      say('');
      say(`[${index}/${DEMO_SECTIONS}] ${title}`);
    },
    say,
    lines: (texts) => texts.forEach(say),
  };
}
