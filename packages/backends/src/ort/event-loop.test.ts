import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ComputePool, type TensorData } from '@flowfleet/platform';
import { loadOrt } from './load-ort.js';
import { OrtSessions } from './ort-sessions.js';
import { ortSessionOptions } from './session-options.js';
import { matmulChainModel, seededFloats } from '../../test-support/ort-test-models.js';

// 12 MatMuls of 512×512 at one intra-op thread: ~35 ms per forward on an idle 2-core box, ~17 ms
// on a fast one. Every bound is relative to the forward time measured in the same window: a
// forward that blocks the main thread stalls a 5 ms interval for about the whole forward, one in
// the pool should not stall it for half of one.
const SIZE = 512;
const DEPTH = 12;
const TICK_MS = 5;
const RUNS_PER_WINDOW = 12;
/** The stall that tells a blocked loop from a free one: this fraction of one forward. */
const BLOCKED_FRACTION = 0.5;
/** Forwards must be long enough against the tick for a stall to be seen at all. */
const MIN_FORWARD_MS = 2 * TICK_MS;
// Other processes share the 2 cores; a busy neighbour can deschedule the main thread for tens of
// ms whatever we do. So the pool's bound must hold in one of a few windows (best of N, as in a
// benchmark), while every window must show the main thread idle (event-loop utilisation).
const MAX_WINDOWS = 5;

interface Window {
  readonly lags: number[];
  readonly utilization: number;
  readonly perRunMs: number;
}

async function measure(runs: number, forward: () => Promise<void>): Promise<Window> {
  const lags: number[] = [];
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    lags.push(Math.max(0, now - last - TICK_MS));
    last = now;
  }, TICK_MS);
  const elu = performance.eventLoopUtilization();
  const started = performance.now();
  try {
    for (let i = 0; i < runs; i++) await forward();
  } finally {
    clearInterval(timer);
  }
  const perRunMs = (performance.now() - started) / runs;
  return { lags, perRunMs, utilization: performance.eventLoopUtilization(elu).utilization };
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

function describeWindow(label: string, w: Window): string {
  return (
    `${label}: ${w.perRunMs.toFixed(1)} ms/forward; lag p50 ${percentile(w.lags, 50).toFixed(2)} ms, ` +
    `p99 ${percentile(w.lags, 99).toFixed(2)} ms, max ${Math.max(0, ...w.lags).toFixed(2)} ms ` +
    `(${w.lags.length} ticks); event-loop utilisation ${w.utilization.toFixed(3)}`
  );
}

const square = (seed: number): TensorData => ({
  dtype: 'float32',
  dims: [SIZE, SIZE],
  data: seededFloats(seed, SIZE * SIZE, 1 / SIZE),
});

describe('compute off the event loop', () => {
  const model = matmulChainModel(SIZE, DEPTH);
  let compute: ComputePool;
  let pool: OrtSessions;

  beforeAll(async () => {
    compute = await ComputePool.create({ threads: 1 });
    pool = await OrtSessions.attach(compute, { intraOpThreads: 1 });
  });
  afterAll(async () => {
    await compute.close();
  });

  it('keeps a 5 ms interval on time during back-to-back forwards in the pool', async () => {
    const session = await pool.createSession(model);
    const inputs = { x: square(1), w: square(2) };
    await pool.run(session, inputs); // warm-up: first-run allocations
    const [before] = await pool.stats();
    const windows: Window[] = [];
    let forwards = 0;
    const margin = (w: Window) => BLOCKED_FRACTION * w.perRunMs - percentile(w.lags, 99);
    while (windows.length < MAX_WINDOWS) {
      const window = await measure(RUNS_PER_WINDOW, async () => {
        const out = await pool.run(session, inputs);
        if (out['y']?.dims[0] === SIZE) forwards += 1;
      });
      windows.push(window);
      console.info(describeWindow(`pool window ${windows.length}`, window));
      expect(window.perRunMs).toBeGreaterThanOrEqual(MIN_FORWARD_MS);
      expect(window.utilization).toBeLessThan(0.5);
      if (margin(window) > 0) break;
    }
    const [after] = await pool.stats();
    expect(forwards).toBe(windows.length * RUNS_PER_WINDOW);
    expect(after!.runs - before!.runs).toBe(forwards);
    // p99 lag under half a forward in the best window.
    expect(Math.max(...windows.map(margin))).toBeGreaterThan(0);
  });

  it('control: the same forwards on the main thread do stall the interval', async () => {
    const ort = await loadOrt();
    const session = await ort.InferenceSession.create(
      model,
      ortSessionOptions({ provider: 'cpu', intraOpThreads: 1 }),
    );
    try {
      const feeds = {
        x: new ort.Tensor('float32', square(1).data, [SIZE, SIZE]),
        w: new ort.Tensor('float32', square(2).data, [SIZE, SIZE]),
      };
      await session.run(feeds);
      const window = await measure(4, async () => {
        await session.run(feeds);
      });
      console.info(describeWindow('in-process', window));
      expect(window.perRunMs).toBeGreaterThanOrEqual(MIN_FORWARD_MS);
      // Each forward holds the loop for about its whole duration: the pool's bound is never met.
      expect(Math.max(0, ...window.lags)).toBeGreaterThan(BLOCKED_FRACTION * window.perRunMs);
      expect(window.utilization).toBeGreaterThan(0.8);
    } finally {
      await session.release();
    }
  });
});
