// Compute off the event loop (DESIGN.md §3) for the TS reference: back-to-back wan21-mini CFG-pair
// forwards (B = 2 at the card's latent, ~300 ms each on this machine kind) leave a 5 ms interval on
// time when the component runs in the compute pool, and stall it when it runs on the
// calling thread (the control that shows the measurement can see a stall).
import { performance } from 'node:perf_hooks';
import { gaussianNoise } from '@flowfleet/numerics';
import { createDitReferenceFactory, initWeights, wan21MiniCard } from '@flowfleet/models/wan21';
import {
  ComputePool,
  type ComponentForward,
  type TensorMap,
  type WeightSet,
} from '@flowfleet/platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const config = wan21MiniCard.config;
const { frames, height, width } = wan21MiniCard.latent;
const LATENT = [2, config.inChannels, frames, height, width];
const TICK_MS = 5;
const RUNS_PER_WINDOW = 3;
// Other processes share the 2 cores and can deschedule the main thread whatever we do, so the
// bound must hold in one of a few windows (best of N), while every window must show the main
// thread idle (event-loop utilisation).
const MAX_WINDOWS = 3;

interface Window {
  readonly lags: number[];
  readonly utilization: number;
  readonly perRunMs: number;
}

async function measure(runs: number, forward: () => Promise<void>): Promise<Window> {
  const lags: number[] = [];
  let last = performance.now();
  let onTick: (() => void) | undefined;
  const timer = setInterval(() => {
    const now = performance.now();
    lags.push(Math.max(0, now - last - TICK_MS));
    last = now;
    onTick?.();
  }, TICK_MS);
  const elu = performance.eventLoopUtilization();
  const started = performance.now();
  let perRunMs: number;
  try {
    for (let i = 0; i < runs; i++) await forward();
    perRunMs = (performance.now() - started) / runs;
    // A loop that never yielded to timers records its stall at the first tick after it.
    await new Promise<void>((resolve) => (onTick = resolve));
  } finally {
    clearInterval(timer);
  }
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

const weights: WeightSet = { id: 'dit@lag', tensors: initWeights(config, 1, 'dit') };
const n = LATENT.reduce((a, b) => a * b, 1);
const inputs: TensorMap = {
  latent: { dtype: 'float32', dims: LATENT, data: gaussianNoise(7, 0, n) },
  timestep: { dtype: 'float32', dims: [2], data: Float32Array.of(937.5, 937.5) },
  context: {
    dtype: 'float32',
    dims: [2, config.textLen, config.textDim],
    data: gaussianNoise(7, 1, 2 * config.textLen * config.textDim),
  },
};

async function build(placement: 'worker' | 'caller', pool: ComputePool) {
  const spec = wan21MiniCard.components.find((c) => c.kind === 'dit')!;
  const factory = createDitReferenceFactory(config, { placement });
  return (await factory(spec, undefined, { pool })) as ComponentForward;
}

describe('TS reference forward off the event loop', () => {
  let pool: ComputePool;
  beforeAll(async () => {
    pool = await ComputePool.create({ threads: 1 });
  });
  afterAll(async () => {
    await pool.close();
  });

  it('keeps a 5 ms interval on time during back-to-back forwards in the worker', async () => {
    const component = await build('worker', pool);
    try {
      await component.run(inputs, weights); // warm-up: upload, workspace, JIT
      const windows: Window[] = [];
      let forwards = 0;
      let bound = Infinity;
      while (windows.length < MAX_WINDOWS) {
        const window = await measure(RUNS_PER_WINDOW, async () => {
          const out = await component.run(inputs, weights);
          if (out['velocity']?.data.length === n) forwards += 1;
        });
        windows.push(window);
        console.info(describeWindow(`worker window ${windows.length}`, window));
        // "Well under a forward": a tenth of one (capped at 100 ms). On a loaded shared box the
        // main thread still waits tens of ms for a core now and then (p99 ≈ 15–35 ms measured);
        // the control below stalls for the whole run.
        bound = Math.min(100, window.perRunMs / 10);
        expect(window.perRunMs).toBeGreaterThan(50);
        expect(window.utilization).toBeLessThan(0.5);
        if (percentile(window.lags, 99) < bound) break;
      }
      expect(forwards).toBe(windows.length * RUNS_PER_WINDOW);
      const best = Math.min(...windows.map((w) => percentile(w.lags, 99)));
      expect(best).toBeLessThan(bound);
    } finally {
      await component.dispose();
    }
  });

  it('control: the same forwards on the calling thread do stall the interval', async () => {
    const component = await build('caller', pool);
    try {
      await component.run(inputs, weights);
      const window = await measure(2, async () => {
        await component.run(inputs, weights);
      });
      console.info(describeWindow('caller thread', window));
      expect(window.perRunMs).toBeGreaterThan(50);
      // Each forward holds the loop for its whole duration.
      expect(Math.max(0, ...window.lags)).toBeGreaterThan(0.8 * window.perRunMs);
      expect(window.utilization).toBeGreaterThan(0.8);
    } finally {
      await component.dispose();
    }
  });
});
