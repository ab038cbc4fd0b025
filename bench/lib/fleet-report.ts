// bench:fleet's report: per-path medians over rounds (ratios paired with the same round's raw
// run), the printed tables, and the profile split of `--profile`.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { printTable, round, writeResults } from './bench-report.js';
import { readProfiles } from './cpu-profile.js';
import type { BenchPath, JobTimeline, RoundSample } from './fleet-paths.js';
import type { DispatchCost } from './noop-dispatch.js';
import { splitProcess, splitRows } from './profile-split.js';

/** Median (mean of the middle two for an even count), NaN values left out. */
export function median(values: readonly number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** One path's figures. */
export interface PathRow {
  readonly path: string;
  readonly n: number;
  readonly rolloutsPerSec: number;
  readonly msPerRolloutPerWorker: number;
  /** Rollouts/s ÷ (n × the same round's raw ×1 rollouts/s), median over rounds. */
  readonly efficiency: number;
  readonly steadyEfficiency: number;
  readonly cpuMsPerRollout: number;
  readonly coordinatorCpuMsPerRollout: number;
  readonly redisCpuMsPerRollout: number;
  readonly redisCommandsPerRollout: number;
  readonly rolloutsPerSecByRound: readonly number[];
  /** Fleets: medians over rounds of each round's job timeline (ms). */
  readonly timeline?: Readonly<Record<keyof JobTimeline, number>>;
}

/** The figures of every path; `rawName` is the path ratios are paired with. */
export function summarizePaths(
  paths: readonly BenchPath[],
  samples: ReadonlyMap<string, readonly RoundSample[]>,
  rawName: string,
): PathRow[] {
  const rawRates = samples.get(rawName)!.map((s) => s.rolloutsPerSec);
  return paths.map((path) => {
    const of = samples.get(path.name)!;
    const pick = (f: (s: RoundSample) => number | undefined, digits: number) =>
      round(median(of.map((s) => f(s) ?? Number.NaN)), digits);
    const vsRaw = (f: (s: RoundSample) => number | undefined) =>
      round(median(of.map((s, r) => (f(s) ?? Number.NaN) / (path.n * rawRates[r]!))), 4);
    const rate = median(of.map((s) => s.rolloutsPerSec));
    return {
      path: path.name,
      n: path.n,
      rolloutsPerSec: round(rate, 3),
      msPerRolloutPerWorker: round((path.n * 1000) / rate, 1),
      efficiency: vsRaw((s) => s.rolloutsPerSec),
      steadyEfficiency: vsRaw((s) => s.steadyRolloutsPerSec),
      cpuMsPerRollout: pick((s) => s.cpuMsPerRollout, 1),
      coordinatorCpuMsPerRollout: pick((s) => s.coordinatorCpuMsPerRollout, 2),
      redisCpuMsPerRollout: pick((s) => s.redisCpuMsPerRollout, 2),
      redisCommandsPerRollout: pick((s) => s.redisCommandsPerRollout, 1),
      rolloutsPerSecByRound: of.map((s) => round(s.rolloutsPerSec, 3)),
      ...(of[0]?.timeline === undefined
        ? {}
        : {
            timeline: Object.fromEntries(
              Object.keys(of[0].timeline).map((key) => [
                key,
                pick((s) => s.timeline?.[key as keyof JobTimeline], 2),
              ]),
            ) as Record<keyof JobTimeline, number>,
          }),
    };
  });
}

const dash = (v: number) => (Number.isNaN(v) ? '—' : v);

/** Prints the path table and, when measured, the dispatch table. */
export function printFigures(rows: readonly PathRow[], dispatch: DispatchCost | undefined): void {
  console.log('');
  printTable(
    rows.map((row) => ({
      path: row.path,
      'rollouts/s': row.rolloutsPerSec,
      'ms/rollout per worker': row.msPerRolloutPerWorker,
      'vs N × raw': row.efficiency,
      'steady state vs N × raw': dash(row.steadyEfficiency),
      'CPU ms/rollout: worker|raw': row.cpuMsPerRollout,
      'coordinator+SDK': dash(row.coordinatorCpuMsPerRollout),
      Redis: dash(row.redisCpuMsPerRollout),
      'Redis cmds': dash(row.redisCommandsPerRollout),
      'rollouts/s by round': row.rolloutsPerSecByRound.join(' '),
    })),
  );
  console.log("\nA fleet job by the server's timestamps and its summary (ms, medians)");
  printTable(
    rows.flatMap((row) =>
      row.timeline === undefined
        ? []
        : [
            {
              path: row.path,
              'job (processedOn→finishedOn)': row.timeline.jobMs,
              runRollout: row.timeline.rolloutMs,
              'in the job, outside runRollout': row.timeline.jobOutsideRolloutMs,
              "between a worker's jobs": row.timeline.betweenJobsMs,
              'round fill (enqueue→first start)': row.timeline.fillMs,
              'round drain (last finish→last read)': row.timeline.drainMs,
            },
          ],
    ),
  );
  if (dispatch === undefined) return;
  console.log(
    `\nDispatch CPU per no-op job (${dispatch.jobs} jobs, ${round(dispatch.jobsPerSec, 0)} jobs/s, one worker)`,
  );
  printTable([
    {
      'coordinator + SDK µs': round(dispatch.coordinatorNodeUs, 0),
      'worker µs': round(dispatch.workerNodeUs, 0),
      'Node total µs': round(dispatch.nodeUs, 0),
      'Redis µs': round(dispatch.redisUs, 0),
      'Redis cmds/job': round(dispatch.redisCommands, 1),
    },
  ]);
}

/** Where the profiles are and which rounds they cover. */
export interface ProfileReport {
  /** Holds `worker/` (the N = 1 worker's threads) and `raw/` (the raw loop's). */
  readonly dir: string;
  readonly fleetRounds: readonly RoundSample[];
  readonly rawRounds: readonly RoundSample[];
  readonly steps: number;
  readonly setup: Record<string, unknown>;
}

/** Prints the split of a rollout's time and writes bench/results/fleet-profile.json. */
export function reportProfile(report: ProfileReport): string {
  const { dir, steps } = report;
  const windows = (rounds: readonly RoundSample[]) => rounds.map((s) => s.window);
  // Kept beside the profiles, so the split can be recomputed from them.
  writeFileSync(
    join(dir, 'windows.json'),
    JSON.stringify({ fleet: windows(report.fleetRounds), raw: windows(report.rawRounds), steps }),
  );
  const fleet = splitProcess(readProfiles(join(dir, 'worker')), windows(report.fleetRounds), steps);
  const raw = splitProcess(readProfiles(join(dir, 'raw')), windows(report.rawRounds), steps);
  const split = splitRows(fleet, raw);
  console.log(
    `\nWhere a rollout's time goes, ms per rollout (CPU-profiled, so slower than unprofiled; ` +
      `${fleet.rollouts} fleet and ${raw.rollouts} raw rollouts; ` +
      `${fleet.skippedRollouts + raw.skippedRollouts} rollouts left out (forwards not told apart); profiles in ${dir})`,
  );
  printTable(
    split.map((row) => ({
      where: row.where,
      cause: row.cause,
      'fleet N=1': round(row.fleet, 2),
      raw: round(row.raw, 2),
      Δ: round(row.delta, 2),
    })),
  );
  console.log(
    `median gap ms: fleet ${JSON.stringify(fleet.medianGapMs)}, raw ${JSON.stringify(raw.medianGapMs)}`,
  );
  return writeResults('fleet-profile', {
    figures: {
      fleetWallMs: fleet.wallMs,
      rawWallMs: raw.wallMs,
      fleetMedianGapMs: fleet.medianGapMs,
      rawMedianGapMs: raw.medianGapMs,
    },
    split,
    setup: { ...report.setup, profiles: dir },
  });
}
