// Where a rollout's time goes, from CPU profiles: the DiT forwards are the `session.run` stretches
// of the thread that runs ONNX Runtime; everything else on the critical path is a gap between two
// forwards — between two steps of a rollout, between two rollouts, or at a round's start and end.
// Each gap is attributed, sample by sample, to what the main thread was doing; where the main
// thread was idle, to the ORT thread (the text-encoder forward, or tensor wrapping and messages),
// and where both were idle, to waiting (I/O to Redis and the coordinator, thread wake-ups).
import { causeAt, IDLE, ortThread, SESSION_RUN, type ThreadProfile } from './cpu-profile.js';

/** A measured stretch (µs, CLOCK_MONOTONIC) in which `rollouts` rollouts ran one after another. */
export interface ProfileWindow {
  readonly from: number;
  readonly to: number;
  readonly rollouts: number;
  /** The DiT forwards, when the process timed them itself (else found in the samples). */
  readonly ditRuns?: readonly (readonly [number, number])[];
}

/** Where the gaps between forwards lie. */
export type GapKind = 'between steps' | 'between rollouts' | 'round start + end';

/** One process's time per rollout (ms). */
export interface ProcessSplit {
  readonly rollouts: number;
  readonly wallMs: number;
  readonly ditForwardMs: number;
  readonly gaps: Readonly<Record<GapKind, Readonly<Record<string, number>>>>;
  /** The median length of one gap of each kind (ms): robust to the odd descheduled stretch. */
  readonly medianGapMs: Readonly<Record<GapKind, number>>;
  /** Windows whose forwards could not be told apart (their count was not rollouts × steps). */
  readonly skippedWindows: number;
}

export const TEXT_ENCODER_FORWARD = 'text-encoder forward (session.run)';
/** Both threads idle: waiting for I/O or a wake-up, named by what the main thread did last. */
export const WAITING = 'waiting, both threads idle,';
export const FORWARD_EDGE = 'edge of a forward (sampling)';

interface Interval {
  readonly from: number;
  readonly to: number;
}

function runIntervals(thread: ThreadProfile, window: ProfileWindow): Interval[] {
  const runs: Interval[] = [];
  let open: { from: number; to: number } | undefined;
  for (const s of thread.samples) {
    if (s.at < window.from || s.at > window.to) continue;
    if (s.cause === SESSION_RUN) {
      open ??= { from: s.at, to: s.at };
      open.to = s.at + s.us;
    } else if (open !== undefined) {
      runs.push(open);
      open = undefined;
    }
  }
  if (open !== undefined) runs.push(open);
  return runs;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/**
 * A forward can show as two when one sample inside it is not in the run frame (a signal landing
 * in native code); while there are more than `expected`, joins the two with the shortest gap if
 * that gap is under a millisecond (a real gap between forwards is longer: the step's maths).
 */
function mergeSplitRuns(runs: Interval[], expected: number): Interval[] {
  const merged = [...runs];
  while (merged.length > expected) {
    let best = -1;
    for (let i = 1; i < merged.length; i++) {
      const gap = merged[i]!.from - merged[i - 1]!.to;
      if (gap < 1000 && (best < 0 || gap < merged[best]!.from - merged[best - 1]!.to)) best = i;
    }
    if (best < 0) break;
    merged.splice(best - 1, 2, { from: merged[best - 1]!.from, to: merged[best]!.to });
  }
  return merged;
}

/** The gaps of one window, by kind; undefined when the DiT forwards do not number rollouts × steps. */
function gapsOf(
  ort: ThreadProfile,
  window: ProfileWindow,
  steps: number,
): { dit: Interval[]; gaps: [GapKind, Interval][] } | undefined {
  let dit: Interval[];
  if (window.ditRuns !== undefined) {
    dit = window.ditRuns.map(([from, to]) => ({ from, to }));
  } else {
    // Text-encoder forwards are far shorter than DiT forwards (2 short sequences vs the latent).
    const runs = runIntervals(ort, window);
    const typical = median(runs.map((r) => r.to - r.from));
    dit = mergeSplitRuns(
      runs.filter((r) => r.to - r.from >= 0.3 * typical),
      window.rollouts * steps,
    );
  }
  if (dit.length !== window.rollouts * steps) return undefined;
  const gaps: [GapKind, Interval][] = [
    ['round start + end', { from: window.from, to: dit[0]!.from }],
  ];
  for (let i = 1; i < dit.length; i++) {
    const kind: GapKind = i % steps === 0 ? 'between rollouts' : 'between steps';
    gaps.push([kind, { from: dit[i - 1]!.to, to: dit[i]!.from }]);
  }
  gaps.push(['round start + end', { from: dit.at(-1)!.to, to: window.to }]);
  return { dit, gaps };
}

function attribute(
  main: ThreadProfile,
  ort: ThreadProfile,
  gap: Interval,
  into: Map<string, number>,
) {
  const add = (cause: string, us: number) => into.set(cause, (into.get(cause) ?? 0) + us);
  let covered = 0;
  // What the main thread last did before it went idle: what it is then waiting for.
  let last = 'the forward';
  for (const s of main.samples) {
    const from = Math.max(s.at, gap.from);
    const to = Math.min(s.at + s.us, gap.to);
    if (to <= from) {
      if (s.at + s.us <= gap.from && s.cause !== IDLE) last = s.cause;
      continue;
    }
    covered += to - from;
    if (s.cause !== IDLE && s.cause !== SESSION_RUN) {
      add(s.cause, to - from);
      last = s.cause;
      continue;
    }
    // A run sample cut by the gap's edge is the neighbouring forward (sampling granularity).
    const edge = s.at < gap.from || s.at + s.us > gap.to;
    const other = s.cause === SESSION_RUN ? SESSION_RUN : causeAt(ort, (from + to) / 2);
    if (other === SESSION_RUN) add(edge ? FORWARD_EDGE : TEXT_ENCODER_FORWARD, to - from);
    else if (other === IDLE) add(`${WAITING} after ${last}`, to - from);
    else add(`ORT thread: ${other}`, to - from);
  }
  if (gap.to - gap.from > covered) add('unsampled', gap.to - gap.from - covered);
}

/**
 * The split of one process's profiles over `windows`: `threads` are every thread profile of the
 * process (the ORT thread is found by its `session.run` time; the main thread is thread 0).
 */
export function splitProcess(
  threads: readonly ThreadProfile[],
  windows: readonly ProfileWindow[],
  steps: number,
): ProcessSplit {
  const ort = ortThread(threads);
  const main = threads.find((t) => t.thread === 0) ?? ort;
  const byKind: Record<GapKind, Map<string, number>> = {
    'between steps': new Map(),
    'between rollouts': new Map(),
    'round start + end': new Map(),
  };
  let rollouts = 0;
  let wallUs = 0;
  let ditUs = 0;
  let skipped = 0;
  const lengths: Record<GapKind, number[]> = {
    'between steps': [],
    'between rollouts': [],
    'round start + end': [],
  };
  for (const window of windows) {
    const found = gapsOf(ort, window, steps);
    if (found === undefined) {
      skipped += 1;
      continue;
    }
    rollouts += window.rollouts;
    wallUs += window.to - window.from;
    ditUs += found.dit.reduce((sum, r) => sum + r.to - r.from, 0);
    for (const [kind, gap] of found.gaps) {
      attribute(main, ort, gap, byKind[kind]);
      lengths[kind].push((gap.to - gap.from) / 1000);
    }
  }
  const perRollout = (us: number) => (rollouts === 0 ? Number.NaN : us / 1000 / rollouts);
  const gaps = Object.fromEntries(
    Object.entries(byKind).map(([kind, causes]) => [
      kind,
      Object.fromEntries([...causes].map(([cause, us]) => [cause, perRollout(us)])),
    ]),
  ) as ProcessSplit['gaps'];
  return {
    rollouts,
    wallMs: perRollout(wallUs),
    ditForwardMs: perRollout(ditUs),
    gaps,
    medianGapMs: {
      'between steps': median(lengths['between steps']),
      'between rollouts': median(lengths['between rollouts']),
      'round start + end': median(lengths['round start + end']),
    },
    skippedWindows: skipped,
  };
}

/** Table rows comparing two splits: forwards, then each gap kind's causes by difference. */
export function splitRows(fleet: ProcessSplit, raw: ProcessSplit, minMs = 0.05) {
  const rows: { where: string; cause: string; fleet: number; raw: number; delta: number }[] = [];
  const row = (where: string, cause: string, f: number, r: number) =>
    rows.push({ where, cause, fleet: f, raw: r, delta: f - r });
  row('forwards', 'DiT session.run', fleet.ditForwardMs, raw.ditForwardMs);
  for (const kind of Object.keys(fleet.gaps) as GapKind[]) {
    const f = fleet.gaps[kind];
    const r = raw.gaps[kind];
    const causes = [...new Set([...Object.keys(f), ...Object.keys(r)])]
      .map((cause) => ({ cause, f: f[cause] ?? 0, r: r[cause] ?? 0 }))
      .filter((c) => c.f >= minMs || c.r >= minMs)
      .sort((a, b) => b.f - b.r - (a.f - a.r));
    for (const c of causes) row(kind, c.cause, c.f, c.r);
  }
  row('total', 'wall per rollout', fleet.wallMs, raw.wallMs);
  return rows;
}
