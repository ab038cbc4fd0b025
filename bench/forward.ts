// bench:forward — per-step dit forward time of wan21-mini (B = 2: one CFG pair at the card's
// latent shape) through the TS reference, ORT eager (weights as inputs) and ORT captured (weights
// baked, dims fixed) at 1 and 2 intra-op threads, all in the same run on the same inputs.
// Prints a table and writes bench/results/forward.json.
import { createOrtComponentBuilder, OrtSessions } from '@flowfleet/backends';
import { gaussianNoise } from '@flowfleet/numerics';
import { initWeights, wan21MiniCard } from '@flowfleet/models/wan21';
import {
  ComputePool,
  type ComponentForward,
  type TensorMap,
  type WeightSet,
} from '@flowfleet/platform';
import {
  printTable,
  round,
  timeAsync,
  timingStats,
  writeResults,
  type TimingStats,
} from './lib/bench-report.js';

const card = wan21MiniCard;
const config = card.config;
const BATCH = 2;
const WARMUP = Number(process.env['BENCH_WARMUP'] ?? 5);
const ITERATIONS = Number(process.env['BENCH_ITERATIONS'] ?? 40);
const { frames, height, width } = card.latent;

const ditSpec = card.components.find((c) => c.kind === 'dit');
if (ditSpec === undefined) throw new Error('wan21-mini has no dit component');

const weights: WeightSet = { id: 'dit@bench', tensors: initWeights(config, 1, 'dit') };
const latentDims = [BATCH, config.inChannels, frames, height, width];
const inputs: TensorMap = {
  latent: {
    dtype: 'float32',
    dims: latentDims,
    data: gaussianNoise(
      7,
      0,
      latentDims.reduce((a, b) => a * b, 1),
    ),
  },
  timestep: { dtype: 'float32', dims: [BATCH], data: Float32Array.from([937.5, 937.5]) },
  context: {
    dtype: 'float32',
    dims: [BATCH, config.textLen, config.textDim],
    data: gaussianNoise(7, 1, BATCH * config.textLen * config.textDim),
  },
};
const inputDims = Object.fromEntries(Object.entries(inputs).map(([k, t]) => [k, t.dims]));

interface Row {
  readonly path: string;
  readonly threads: number;
  readonly stats: TimingStats;
}
const rows: Row[] = [];
const measure = async (path: string, threads: number, fn: () => Promise<unknown>) => {
  const samples = await timeAsync(fn, { warmup: WARMUP, iterations: ITERATIONS });
  rows.push({ path, threads, stats: timingStats(samples) });
  console.error(`measured ${path} @${threads}t`);
};

// TS reference (one compute thread; single-threaded by construction).
const referencePool = await ComputePool.create({ threads: 1 });
const reference = (await ditSpec.factory(ditSpec, undefined, {
  pool: referencePool,
})) as ComponentForward;
await measure('ts-reference', 1, () => reference.run(inputs, weights));
await reference.dispose();
await referencePool.close();

// ORT at 1 and 2 intra-op threads, each in its own single-thread pool.
const captureMs: Record<string, number> = {};
for (const threads of [1, 2]) {
  const pool = await ComputePool.create({ threads: 1 });
  try {
    const sessions = await OrtSessions.attach(pool, { intraOpThreads: threads });
    const component = await createOrtComponentBuilder({ sessions })(ditSpec, undefined);
    const captureStart = performance.now();
    const captured = await component.capture!(weights, inputDims);
    captureMs[`${threads}t`] = round(performance.now() - captureStart, 1);
    // Interleave eager and captured rounds so drift in machine load hits both alike.
    const eagerSamples: number[] = [];
    const capturedSamples: number[] = [];
    await timeAsync(() => component.run(inputs, weights), { warmup: WARMUP, iterations: 0 });
    await timeAsync(() => captured.run(inputs), { warmup: WARMUP, iterations: 0 });
    for (let i = 0; i < ITERATIONS; i += 1) {
      eagerSamples.push(
        ...(await timeAsync(() => component.run(inputs, weights), { warmup: 0, iterations: 1 })),
      );
      capturedSamples.push(
        ...(await timeAsync(() => captured.run(inputs), { warmup: 0, iterations: 1 })),
      );
    }
    rows.push({ path: 'ort-eager', threads, stats: timingStats(eagerSamples) });
    rows.push({ path: 'ort-captured', threads, stats: timingStats(capturedSamples) });
    console.error(`measured ort @${threads}t`);
    await captured.dispose();
    await component.dispose();
  } finally {
    await pool.close();
  }
}

const median = (path: string, threads: number) =>
  rows.find((r) => r.path === path && r.threads === threads)?.stats.medianMs ?? Number.NaN;
const refMedian = median('ts-reference', 1);
printTable(
  rows.map((r) => ({
    path: r.path,
    threads: r.threads,
    'median ms': r.stats.medianMs,
    'p90 ms': r.stats.p90Ms,
    'min ms': r.stats.minMs,
    'speed-up vs TS ref': round(refMedian / r.stats.medianMs, 2),
  })),
);
const figures = {
  tsReferenceMedianMs: refMedian,
  ortEager1tMedianMs: median('ort-eager', 1),
  ortCaptured1tMedianMs: median('ort-captured', 1),
  ortEager2tMedianMs: median('ort-eager', 2),
  ortCaptured2tMedianMs: median('ort-captured', 2),
  ortEager1tOverReference: round(refMedian / median('ort-eager', 1), 2),
  capturedOverEager1t: round(median('ort-eager', 1) / median('ort-captured', 1), 3),
  capturedOverEager2t: round(median('ort-eager', 2) / median('ort-captured', 2), 3),
  twoThreadsOverOneEager: round(median('ort-eager', 1) / median('ort-eager', 2), 3),
  captureMs,
};
console.log(JSON.stringify(figures, null, 2));
const file = writeResults('forward', {
  figures,
  setup: {
    model: card.id,
    batch: BATCH,
    latent: latentDims,
    warmup: WARMUP,
    iterations: ITERATIONS,
  },
  rows,
});
console.error(`wrote ${file}`);
