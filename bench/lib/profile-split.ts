// Where a rollout's time goes, from CPU profiles: the DiT forwards are the `session.run` stretches
// of the thread that runs ONNX Runtime; everything else on the critical path is a gap between two
// forwards — between two steps of a rollout, between two rollouts, or at a round's start and end.
// Each gap is attributed, sample by sample, to what the main thread was doing; where the main
// thread was idle, to the ORT thread (the text-encoder forward, or tensor wrapping and messages),
// and where both were idle, to waiting (I/O to Redis and the coordinator, thread wake-ups), named
// by what the main thread did last.
import { causeAt, IDLE, ortThread, SESSION_RUN, type ThreadProfile } from './cpu-profile.js';

/** A span of time, µs of CLOCK_MONOTONIC (as `process.hrtime` and V8's profiles). */
export interface Interval {
  readonly from: number;
  readonly to: number;
}

/** A measured stretch in which `rollouts` rollouts ran one after another. */
export interface ProfileWindow extends Interval {
  readonly rollouts: number;
  /** The DiT forwards, when the process timed them itself (the raw loop). */
  readonly ditRuns?: readonly (readonly [number, number])[];
  /** Each job's processedOn → finishedOn (a fleet): anchors its forwards. */
  readonly jobs?: readonly Interval[];
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
  /** Rollouts whose forwards could not be told apart in the samples (left out). */
  readonly skippedRollouts: number;
}

export const TEXT_ENCODER_FORWARD = 'text-encoder forward (session.run)';
/** Both threads idle: waiting for I/O or a wake-up, named by what the main thread did last. */
export const WAITING = 'waiting, both threads idle,';
export const FORWARD_EDGE = 'edge of a forward (sampling)';
const KINDS: readonly GapKind[] = ['between steps', 'between rollouts', 'round start + end'];

/** A stretch of `session.run` samples, with each sample's time to the next. */
interface Run extends Interval {
  readonly samples: readonly { readonly at: number; readonly us: number }[];
}

function runsIn(thread: ThreadProfile, span: Interval): Run[] {
  const runs: Run[] = [];
  let open: { at: number; us: number }[] = [];
  const close = () => {
    if (open.length > 0) {
      runs.push({ from: open[0]!.at, to: open.at(-1)!.at + open.at(-1)!.us, samples: open });
    }
    open = [];
  };
  for (const s of thread.samples) {
    if (s.at < span.from || s.at > span.to) continue;
    if (s.cause === SESSION_RUN) open.push({ at: s.at, us: s.us });
    else close();
  }
  close();
  return runs;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * One job's DiT forwards from the samples, or undefined when they do not come out as `steps`.
 * Text-encoder forwards are far shorter and are left out. Two forwards show as one when no
 * sample landed in the short gap between them (the gap hides in one long sample): while too
 * few, split at the longest samples (over 0.6 ms). One forward shows as two when a sample inside
 * it was not in the run frame: while too many, join across the shortest gaps (under 1 ms).
 */
function ditOfJob(ort: ThreadProfile, job: Interval, steps: number): Interval[] | undefined {
  const all = runsIn(ort, { from: job.from - 1000, to: job.to + 1000 });
  const typical = median(all.map((r) => r.to - r.from));
  let runs: Interval[] = all.filter((r) => r.to - r.from >= 0.3 * typical);
  if (runs.length < steps) {
    const cuts = (runs as Run[])
      .flatMap((run, r) => run.samples.slice(0, -1).map((sample, i) => ({ r, i, us: sample.us })))
      .filter((cut) => cut.us > 600)
      .sort((x, y) => y.us - x.us)
      .slice(0, steps - runs.length);
    runs = (runs as Run[]).flatMap((run, r) => {
      const pieces: Interval[] = [];
      let from = run.from;
      for (const i of cuts
        .filter((c) => c.r === r)
        .map((c) => c.i)
        .sort((x, y) => x - y)) {
        pieces.push({ from, to: run.samples[i]!.at });
        from = run.samples[i + 1]!.at;
      }
      pieces.push({ from, to: run.to });
      return pieces;
    });
  }
  while (runs.length > steps) {
    let best = -1;
    for (let i = 1; i < runs.length; i++) {
      const gap = runs[i]!.from - runs[i - 1]!.to;
      if (gap < 1000 && (best < 0 || gap < runs[best]!.from - runs[best - 1]!.to)) best = i;
    }
    if (best < 0) break;
    runs.splice(best - 1, 2, { from: runs[best - 1]!.from, to: runs[best]!.to });
  }
  return runs.length === steps ? runs : undefined;
}

/** Each rollout's DiT forwards in a window (undefined where they could not be told apart). */
function ditByRollout(
  ort: ThreadProfile,
  window: ProfileWindow,
  steps: number,
): (Interval[] | undefined)[] {
  if (window.ditRuns !== undefined) {
    const runs = window.ditRuns.map(([from, to]) => ({ from, to }));
    return Array.from({ length: window.rollouts }, (_, r) => {
      const mine = runs.slice(r * steps, (r + 1) * steps);
      return mine.length === steps ? mine : undefined;
    });
  }
  return (window.jobs ?? []).map((job) => ditOfJob(ort, job, steps));
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
 * process (the ORT thread is found by its `session.run` time; the main thread is thread 0). Step
 * gaps and forwards count per rollout told apart; a gap between rollouts where both sides were;
 * a round's start and end where its first and last were.
 */
export function splitProcess(
  threads: readonly ThreadProfile[],
  windows: readonly ProfileWindow[],
  steps: number,
): ProcessSplit {
  const ort = ortThread(threads);
  const main = threads.find((t) => t.thread === 0) ?? ort;
  const sums = new Map(KINDS.map((kind) => [kind, new Map<string, number>()]));
  const lengths = new Map(KINDS.map((kind) => [kind, [] as number[]]));
  const units = new Map<GapKind, number>(KINDS.map((kind) => [kind, 0]));
  let told = 0;
  let skipped = 0;
  let ditUs = 0;
  let wallUs = 0;
  let rollouts = 0;
  const gap = (kind: GapKind, span: Interval) => {
    attribute(main, ort, span, sums.get(kind)!);
    lengths.get(kind)!.push((span.to - span.from) / 1000);
  };
  for (const window of windows) {
    wallUs += window.to - window.from;
    rollouts += window.rollouts;
    const byRollout = ditByRollout(ort, window, steps);
    byRollout.forEach((dit, r) => {
      if (dit === undefined) {
        skipped += 1;
        return;
      }
      told += 1;
      ditUs += dit.reduce((sum, run) => sum + run.to - run.from, 0);
      for (let i = 1; i < steps; i++)
        gap('between steps', { from: dit[i - 1]!.to, to: dit[i]!.from });
      const next = byRollout[r + 1];
      if (next !== undefined) {
        gap('between rollouts', { from: dit.at(-1)!.to, to: next[0]!.from });
        units.set('between rollouts', units.get('between rollouts')! + 1);
      }
    });
    const first = byRollout[0];
    const last = byRollout.at(-1);
    if (first !== undefined && last !== undefined && byRollout.length === window.rollouts) {
      gap('round start + end', { from: window.from, to: first[0]!.from });
      gap('round start + end', { from: last.at(-1)!.to, to: window.to });
      units.set('round start + end', units.get('round start + end')! + 1);
    }
  }
  // Per rollout: a round of K rollouts has K − 1 gaps between rollouts and one start and end.
  const k = rollouts / Math.max(1, windows.length);
  const perRollout: Record<GapKind, number> = {
    'between steps': told,
    'between rollouts': (units.get('between rollouts')! * k) / Math.max(1, k - 1),
    'round start + end': units.get('round start + end')! * k,
  };
  const gaps = Object.fromEntries(
    KINDS.map((kind) => [
      kind,
      Object.fromEntries(
        [...sums.get(kind)!].map(([cause, us]) => [cause, us / 1000 / perRollout[kind]]),
      ),
    ]),
  ) as ProcessSplit['gaps'];
  return {
    rollouts: told,
    wallMs: wallUs / 1000 / Math.max(1, rollouts),
    ditForwardMs: ditUs / 1000 / Math.max(1, told),
    gaps,
    medianGapMs: Object.fromEntries(
      KINDS.map((kind) => [kind, median(lengths.get(kind)!)]),
    ) as Record<GapKind, number>,
    skippedRollouts: skipped,
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
