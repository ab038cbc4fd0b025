// bench:rollout — one 10-step SDE rollout group (G = 4, CFG 4.5, wan21-mini at its card shape)
// through the TS reference, ORT eager, ORT captured, and a hand-written raw ORT loop that uses the
// same kind of specialised sessions and the same inputs with no runtime in between. Interleaved
// rounds, medians; prints a table and writes bench/results/rollout.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import {
  declareOrtCells,
  ortCellWiring,
  OrtSessions,
  registerCpuBackend,
} from '@flowfleet/backends';
import { initWeights, wan21MiniCard } from '@flowfleet/models/wan21';
import { ComputePool, createPlatform } from '@flowfleet/platform';
import { createComponentRegistry, createKernelRegistry } from '@flowfleet/registry';
import {
  ModelInstance,
  runRollout,
  type RolloutRequest,
  type RolloutResult,
} from '@flowfleet/runtime';
import { captureRaw, ForwardClock, rawRollout, type RawWorkload } from './rollout-raw-loop.js';

const card = wan21MiniCard;
const config = card.config;
const STEPS = 10;
const SEEDS = [101, 102, 103, 104];
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 7);
const SHAPE = card.latent;
const GUIDANCE = 4.5;
const NOISE_LEVEL = 0.7;
const SHIFT = card.sampling.shift;
const PROMPT = 'a red fox running through fresh snow';

const request: RolloutRequest = {
  prompt: PROMPT,
  seeds: SEEDS,
  steps: STEPS,
  shift: SHIFT,
  sampler: 'sde',
  guidanceScale: GUIDANCE,
  noiseLevel: NOISE_LEVEL,
  shape: SHAPE,
};

const weights = {
  dit: { version: 1, weights: { id: 'dit@1', tensors: initWeights(config, 1, 'dit') } },
  text_encoder: {
    version: 1,
    weights: { id: 'text_encoder@1', tensors: initWeights(config, 1, 'text_encoder') },
  },
};

const workload: RawWorkload = {
  config,
  prompt: PROMPT,
  seeds: SEEDS,
  steps: STEPS,
  shift: SHIFT,
  guidanceScale: GUIDANCE,
  noiseLevel: NOISE_LEVEL,
  shape: SHAPE,
  ditWeights: weights.dit.weights,
  textEncoderWeights: weights.text_encoder.weights,
};

function platformWith(pool: ComputePool, components = createComponentRegistry()) {
  const kernels = createKernelRegistry();
  registerCpuBackend({ kernels });
  return createPlatform({ kernels, components, pool });
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function sameBits(a: Float32Array | Float64Array, b: Float32Array | Float64Array): boolean {
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/** An sde rollout's log-probs (the bench runs sde only; ode has none). */
function logProbsOf(result: RolloutResult): Float64Array {
  return result.record.logProbs ?? new Float64Array(0);
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await fn();
  return { ms: performance.now() - started, value };
}

async function main(): Promise<void> {
  // One compute thread for every path: the TS reference forwards and the ORT sessions.
  const pool = await ComputePool.create({ threads: 1 });
  // 1. TS reference (one rollout, captured: a static workspace + pinned weights).
  const tsInstance = await ModelInstance.create({ card, platform: platformWith(pool), weights });
  const ts = await timed(() => runRollout(tsInstance, request));
  await tsInstance.close();

  // 2. ORT: one instance; eager and captured share the components and weights.
  const sessions = await OrtSessions.attach(pool, { intraOpThreads: Math.min(2, cpus().length) });
  const components = createComponentRegistry();
  declareOrtCells({
    registries: { components },
    kinds: card.components.map((c) => c.kind),
    ...ortCellWiring(sessions),
  });
  const ort = await ModelInstance.create({
    card,
    platform: platformWith(pool, components),
    weights,
  });
  const clock = new ForwardClock();
  clock.instrument(ort.component('dit'));
  clock.instrument(ort.component('text_encoder'));
  const eagerWarm = await runRollout(ort, { ...request, graphCapture: 'off' });
  const firstCaptured = await runRollout(ort, request);
  const raw = await timed(() =>
    captureRaw(ort.component('dit'), ort.component('text_encoder'), workload),
  );
  const rawWarm = await rawRollout(raw.value, workload);

  const times = { eager: [] as number[], captured: [] as number[], raw: [] as number[] };
  // Time outside the forwards: the solver kernels, noise, bookkeeping — where overhead lives.
  const outside = { eager: [] as number[], captured: [] as number[], raw: [] as number[] };
  let lastEager: RolloutResult = eagerWarm;
  let lastCaptured: RolloutResult = firstCaptured;
  let lastRaw = rawWarm;
  const order: (keyof typeof times)[] = ['raw', 'captured', 'eager'];
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of order.map((_, k) => order[(k + round) % order.length]!)) {
      if (mode === 'raw') {
        clock.take();
        const r = await timed(() => rawRollout(raw.value, workload));
        times.raw.push(r.ms);
        outside.raw.push(r.ms - clock.take());
        lastRaw = r.value;
      } else if (mode === 'captured') {
        clock.take();
        const r = await timed(() => runRollout(ort, request));
        times.captured.push(r.ms);
        outside.captured.push(r.ms - clock.take());
        lastCaptured = r.value;
      } else {
        clock.take();
        const r = await timed(() => runRollout(ort, { ...request, graphCapture: 'off' }));
        times.eager.push(r.ms);
        outside.eager.push(r.ms - clock.take());
        lastEager = r.value;
      }
    }
  }
  const stats = ort.capturer.stats();
  await raw.value.dispose();
  await ort.close();
  await pool.close();

  const ms = {
    eager: median(times.eager),
    captured: median(times.captured),
    raw: median(times.raw),
  };
  const stepsPerSec = (rolloutMs: number): number => (STEPS * 1000) / rolloutMs;
  // Paired per round (the three modes ran back to back), so load drift on a shared box cancels.
  const paired = (num: number[], den: number[]): number => median(num.map((v, r) => v / den[r]!));
  const outsideMs = {
    eager: median(outside.eager),
    captured: median(outside.captured),
    raw: median(outside.raw),
  };
  const figures = {
    overheadVsRawPct: ((outsideMs.captured - outsideMs.raw) / ms.raw) * 100,
    overheadVsRawPctWall: (paired(times.captured, times.raw) - 1) * 100,
    capturedOverEager: paired(times.eager, times.captured),
    overheadVsRawPctOfMedians: ((ms.captured - ms.raw) / ms.raw) * 100,
    capturedOverEagerOfMedians: ms.eager / ms.captured,
    captureMs: firstCaptured.timings.captureMs,
    rawSessionCaptureMs: raw.ms,
    tsReferenceStepsPerSec: stepsPerSec(ts.ms),
    ortEagerStepsPerSec: stepsPerSec(ms.eager),
    ortCapturedStepsPerSec: stepsPerSec(ms.captured),
    rawOrtStepsPerSec: stepsPerSec(ms.raw),
    capturedBitIdenticalToEager:
      sameBits(lastCaptured.record.latents, lastEager.record.latents) &&
      sameBits(logProbsOf(lastCaptured), logProbsOf(lastEager)),
    rawBitIdenticalToCaptured:
      sameBits(lastRaw.latents, lastCaptured.record.latents) &&
      sameBits(lastRaw.logProbs, logProbsOf(lastCaptured)),
    tsVsOrtMaxAbsLatentDiff: maxAbsDiff(ts.value.record.latents, lastCaptured.record.latents),
  };
  const rows = [
    ['TS reference (captured workspace)', ts.ms, stepsPerSec(ts.ms), 1],
    ['ORT eager', ms.eager, figures.ortEagerStepsPerSec, ROUNDS],
    ['ORT captured (runtime)', ms.captured, figures.ortCapturedStepsPerSec, ROUNDS],
    ['raw ORT loop (no runtime)', ms.raw, figures.rawOrtStepsPerSec, ROUNDS],
  ] as const;
  console.log(
    `\nrollout: wan21-mini, G=${SEEDS.length}, ${STEPS} SDE steps, CFG ${GUIDANCE}, latent ${SHAPE.frames}x${SHAPE.height}x${SHAPE.width}`,
  );
  console.log('| mode | median ms / rollout | steps/s | runs |');
  console.log('| --- | ---: | ---: | ---: |');
  for (const [name, t, sps, runs] of rows)
    console.log(`| ${name} | ${t.toFixed(1)} | ${sps.toFixed(2)} | ${runs} |`);
  console.log('');
  console.log(
    `time outside forwards (ms):   runtime ${outsideMs.captured.toFixed(1)}, raw ${outsideMs.raw.toFixed(1)}, eager ${outsideMs.eager.toFixed(1)}`,
  );
  console.log(
    `runtime overhead vs raw loop: ${figures.overheadVsRawPct.toFixed(2)} % outside-forward difference, goal ≤ 2 % (wall, paired: ${figures.overheadVsRawPctWall.toFixed(2)} %)`,
  );
  console.log(
    `captured / eager speed:       ${figures.capturedOverEager.toFixed(3)}× (median of per-round ratios; goal ≥ 1.1× where bit-identity allows; never slower)`,
  );
  console.log(`capture cost (first rollout): ${figures.captureMs.toFixed(1)} ms`);
  console.log(
    `captured ≡ eager bit for bit: ${figures.capturedBitIdenticalToEager}; raw ≡ captured: ${figures.rawBitIdenticalToCaptured}`,
  );
  console.log(
    `TS vs ORT final latents max |Δ|: ${figures.tsVsOrtMaxAbsLatentDiff.toExponential(2)}`,
  );
  const result = {
    bench: 'rollout',
    date: new Date().toISOString(),
    environment: {
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      platform: firstCaptured.record.metadata.platform,
      ortPool: { threads: 1, intraOpThreads: Math.min(2, cpus().length) },
    },
    workload: {
      model: card.id,
      group: SEEDS.length,
      steps: STEPS,
      sampler: 'sde',
      guidanceScale: GUIDANCE,
      shape: SHAPE,
      rounds: ROUNDS,
    },
    figures,
    medianMs: ms,
    medianMsOutsideForwards: outsideMs,
    samplesMs: { ...times, tsReference: [ts.ms] },
    instanceCaptureStats: stats,
    notes: [
      'Captured sessions on the ONNX Runtime CPU EP run with pre-packing off at level basic, the only settings measured to keep them bit-identical to the eager weights-as-inputs sessions (DESIGN.md §8); so on CPU captured ≈ eager in speed and the captured graph is worth its keying, eviction and static buffers, not speed. The speed case is GPU providers.',
      'The raw loop runs on sessions captured the same way from the same components, with the same inputs; its trajectory is checked bit-identical to the runtime captured one.',
      'overheadVsRawPct = (median time outside the forwards, runtime captured − raw loop) / median raw rollout time: both run the same sessions on the same inputs, so the forward time is common work and the difference outside it is what the runtime adds. Wall-clock rollout times on this shared 2-core box vary by ±40 % run to run, far above a 2 % goal; overheadVsRawPctWall (median of per-round wall ratios) is reported beside it.',
      'Modes are interleaved round by round (rotating order). capturedOverEager is the median of per-round wall ratios (paired, so load drift cancels); the *OfMedians figures are ratios of per-mode medians.',
      'A direct session A/B (same dit inputs, 30 alternating runs, B=8, 4x16x16) measured the specialised session at 0.95-0.985x the eager weights-as-inputs session, so captured < eager on CPU comes from the session, not from the runtime.',
    ],
  };
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(
    new URL('./results/rollout.json', import.meta.url),
    `${JSON.stringify(result, null, 2)}\n`,
  );
  console.log('\nwrote bench/results/rollout.json');
}

await main();
