/** Why a capturable loop ran a step eagerly. */
export type EagerBreakReason = 'not-capturable' | 'override' | 'no-graph-fn';

/** Every EagerBreakReason. */
export const EAGER_BREAK_REASONS: readonly EagerBreakReason[] = Object.freeze([
  'not-capturable',
  'override',
  'no-graph-fn',
]);

/** How a step ran: `eager` when capture is off for the loop or request. */
export type ExecutionMode = 'eager' | 'eager-break' | 'capture' | 'replay';

/** Counters of a GraphCapturer (per instance) or of one rollout. */
export interface CaptureStats {
  readonly captures: number;
  readonly replays: number;
  readonly eagerBreaks: number;
  readonly eagerBreakReasons: Readonly<Record<EagerBreakReason, number>>;
  /** Steps run eagerly because capture was off (not counted as breaks). */
  readonly eagerSteps: number;
  readonly evictions: number;
  readonly liveGraphs: number;
  readonly bytesHeld: number;
  /** Time spent capturing (building workspaces and specialised sessions), in ms. */
  readonly captureMs: number;
}

/** Mutable counters behind a CaptureStats snapshot. */
export class CaptureCounters {
  captures = 0;
  replays = 0;
  eagerSteps = 0;
  evictions = 0;
  captureMs = 0;
  readonly breaks: Record<EagerBreakReason, number> = {
    'not-capturable': 0,
    override: 0,
    'no-graph-fn': 0,
  };

  /** Counts one step that ran in `mode`. */
  count(mode: ExecutionMode, reason?: EagerBreakReason, captureMs = 0): void {
    if (mode === 'capture') {
      this.captures++;
      this.captureMs += captureMs;
    } else if (mode === 'replay') this.replays++;
    else if (mode === 'eager') this.eagerSteps++;
    else if (reason !== undefined) this.breaks[reason]++;
  }

  /** A frozen snapshot, with the live-graph figures supplied by the owner. */
  snapshot(liveGraphs: number, bytesHeld: number): CaptureStats {
    const eagerBreaks = Object.values(this.breaks).reduce((a, b) => a + b, 0);
    return Object.freeze({
      captures: this.captures,
      replays: this.replays,
      eagerBreaks,
      eagerBreakReasons: Object.freeze({ ...this.breaks }),
      eagerSteps: this.eagerSteps,
      evictions: this.evictions,
      liveGraphs,
      bytesHeld,
      captureMs: this.captureMs,
    });
  }
}
