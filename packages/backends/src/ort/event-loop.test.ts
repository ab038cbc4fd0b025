import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TensorData } from '@flowfleet/platform';
import { loadOrt } from './load-ort.js';
import { OrtWorkerPool } from './ort-worker-pool.js';
import { ortSessionOptions } from './session-options.js';
import { matmulChainModel, seededFloats } from './test-models.js';

// 12 MatMuls of 512×512 at one intra-op thread: ~35 ms per forward on an idle 2-core box (6 took
// 16–25 ms: on a quiet machine too short to tell a blocked loop from a busy one at 20 ms).
const SIZE = 512;
const DEPTH = 12;
const TICK_MS = 5;
const RUNS_PER_WINDOW = 12;
// Other processes share the 2 cores; a busy neighbour can deschedule the main thread for tens of
// ms whatever we do. So the lag bound must hold in one of a few windows (best of N, as in a
// benchmark), while every window must show the main thread idle (event-loop utilisation), and
// the in-process control can never meet the bound: each of its forwards blocks the loop ≥ 20 ms.
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
  let pool: OrtWorkerPool;

  beforeAll(async () => {
    pool = await OrtWorkerPool.create({ threads: 1, intraOpThreads: 1 });
  });
  afterAll(async () => {
    await pool.close();
  });

  it('keeps a 5 ms interval on time during back-to-back forwards in the pool', async () => {
    const session = await pool.createSession(model);
    const inputs = { x: square(1), w: square(2) };
    await pool.run(session, inputs); // warm-up: first-run allocations
    const [before] = await pool.stats();
    const windows: Window[] = [];
    let forwards = 0;
    while (windows.length < MAX_WINDOWS) {
      const window = await measure(RUNS_PER_WINDOW, async () => {
        const out = await pool.run(session, inputs);
        if (out['y']?.dims[0] === SIZE) forwards += 1;
      });
      windows.push(window);
      console.info(describeWindow(`pool window ${windows.length}`, window));
      expect(window.perRunMs).toBeGreaterThanOrEqual(20);
      expect(window.utilization).toBeLessThan(0.5);
      if (percentile(window.lags, 99) < 20) break;
    }
    const [after] = await pool.stats();
    expect(forwards).toBe(windows.length * RUNS_PER_WINDOW);
    expect(after!.runs - before!.runs).toBe(forwards);
    const best = Math.min(...windows.map((w) => percentile(w.lags, 99)));
    expect(best).toBeLessThan(20);
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
      expect(window.perRunMs).toBeGreaterThanOrEqual(20);
      expect(Math.max(0, ...window.lags)).toBeGreaterThan(20);
      expect(window.utilization).toBeGreaterThan(0.8);
    } finally {
      await session.release();
    }
  });
});
