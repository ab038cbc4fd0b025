// bench:pool — what a forward's round trip through a thread pool costs, in the same run: a tiny
// ONNX Runtime forward (the probe model) and a wan21-mini DiT forward (G = 4 CFG batch: B = 8 at
// the card's 4×16×16 latent, weights resident in the thread), each on the main thread (raw), through
// flowfleet's ComputePool (OrtSessions), and — when PISCINA_DIR names a directory where
// `npm install piscina` ran — through piscina with the same work in a task module. Interleaved
// rounds; overhead = round trip − the forward's own time inside the thread. Writes
// bench/results/pool.json.
import {
  loadOrt,
  onnxArtifactsOf,
  ortSessionOptions,
  OrtSessions,
  PROBE_MODEL_BYTES,
} from '@flowfleet/backends';
import { initWeights, wan21MiniCard } from '@flowfleet/models/wan21';
import { gaussianNoise } from '@flowfleet/numerics';
import {
  ComputePool,
  unsharedTensor,
  type TensorData,
  type TensorMap,
  type WeightSet,
} from '@flowfleet/platform';
import type { Tensor } from 'onnxruntime-node';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { printTable, round, timingStats, writeResults } from './lib/bench-report.js';
import type { PiscinaOrtTask } from './lib/piscina-ort-task.js';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 10);
const PER_ROUND = { small: 200, dit: 5 } as const;
const G = 4;
const card = wan21MiniCard;
const config = card.config;

interface Workload {
  readonly name: 'small' | 'dit';
  readonly model: Uint8Array;
  readonly inputs: TensorMap;
  readonly weights: WeightSet | undefined;
}

function workloads(): Workload[] {
  const spec = card.components.find((c) => c.kind === 'dit')!;
  const artifacts = onnxArtifactsOf(spec);
  const { frames, height, width } = card.latent;
  const latentDims = [2 * G, config.inChannels, frames, height, width];
  const own: TensorMap = {
    latent: {
      dtype: 'float32',
      dims: latentDims,
      data: gaussianNoise(
        3,
        0,
        latentDims.reduce((a, b) => a * b, 1),
      ),
    },
    timestep: { dtype: 'float32', dims: [2 * G], data: new Float32Array(2 * G).fill(937.5) },
    context: {
      dtype: 'float32',
      dims: [2 * G, config.textLen, config.textDim],
      data: gaussianNoise(3, 1, 2 * G * config.textLen * config.textDim),
    },
  };
  const dims = Object.fromEntries(Object.entries(own).map(([k, t]) => [k, t.dims]));
  return [
    {
      name: 'small',
      model: PROBE_MODEL_BYTES,
      inputs: { x: { dtype: 'float32', dims: [1], data: Float32Array.of(42) } },
      weights: undefined,
    },
    {
      name: 'dit',
      model: artifacts.buildOnnx({ form: 'eager' }),
      inputs: { ...artifacts.eagerInputs(dims), ...own },
      weights: { id: 'dit@bench-pool', tensors: initWeights(config, 1, 'dit') },
    },
  ];
}

/** One forward's timing: the round trip as the caller sees it, and the time inside the thread. */
interface Sample {
  readonly roundTripMs: number;
  /** The handler's whole body in its thread (for raw: the forward itself). */
  readonly inThreadMs: number;
}

/** One way of running a workload's forward; times its own call, apart from any counter reads. */
type Runner = () => Promise<Sample>;

async function timedCall(call: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await call();
  return performance.now() - started;
}

async function rawRunner(w: Workload): Promise<Runner> {
  const ort = await loadOrt();
  const session = await ort.InferenceSession.create(
    w.model,
    ortSessionOptions({ provider: 'cpu', intraOpThreads: 1 }),
  );
  const feeds: Record<string, Tensor> = {};
  for (const name of session.inputNames) {
    const shared = w.weights?.tensors.get(name) ?? w.inputs[name];
    const t = shared === undefined ? undefined : unsharedTensor(shared);
    if (t !== undefined) feeds[name] = new ort.Tensor(t.dtype, t.data, t.dims);
  }
  return async () => {
    const ms = await timedCall(() => session.run(feeds));
    return { roundTripMs: ms, inThreadMs: ms };
  };
}

async function poolRunner(w: Workload, sessions: OrtSessions): Promise<Runner> {
  const id = await sessions.createSession(w.model, { intraOpThreads: 1 });
  const options = w.weights === undefined ? {} : { weights: w.weights };
  return async () => {
    const before = (await sessions.pool.stats())[0]!;
    const roundTripMs = await timedCall(() => sessions.run(id, w.inputs, options));
    const after = (await sessions.pool.stats())[0]!;
    return { roundTripMs, inThreadMs: after.busyMs - before.busyMs };
  };
}

interface PiscinaPool {
  run(task: PiscinaOrtTask): Promise<unknown>;
  close(): Promise<void>;
}

async function piscinaPool(dir: string): Promise<PiscinaPool> {
  const entry = pathToFileURL(join(dir, 'node_modules/piscina/dist/main.js')).href;
  const { default: Piscina } = (await import(entry)) as {
    default: new (options: Record<string, unknown>) => PiscinaPool;
  };
  return new Piscina({
    filename: new URL('./lib/piscina-ort-task.ts', import.meta.url).href,
    name: 'runOrtTask',
    minThreads: 1,
    maxThreads: 1,
    idleTimeout: Number.POSITIVE_INFINITY,
  });
}

async function piscinaRunner(w: Workload, pool: PiscinaPool, n: number): Promise<Runner> {
  const sessionId = `${w.name}-${n}`;
  await pool.run({ op: 'createSession', sessionId, model: w.model });
  if (w.weights !== undefined) {
    await pool.run({ op: 'upload', weightsId: w.weights.id, tensors: w.weights.tensors });
  }
  const task: PiscinaOrtTask = {
    op: 'run',
    sessionId,
    inputs: w.inputs as Readonly<Record<string, TensorData>>,
    ...(w.weights === undefined ? {} : { weightsId: w.weights.id }),
  };
  return async () => {
    let runMs = Number.NaN;
    const roundTripMs = await timedCall(async () => {
      runMs = ((await pool.run(task)) as { runMs: number }).runMs;
    });
    return { roundTripMs, inThreadMs: runMs };
  };
}

async function main(): Promise<void> {
  const piscinaDir = process.env['PISCINA_DIR'];
  const compute = await ComputePool.create({ threads: 1 });
  const sessions = await OrtSessions.attach(compute, { intraOpThreads: 1 });
  const piscina = piscinaDir === undefined ? undefined : await piscinaPool(piscinaDir);
  const rows: Record<string, string | number>[] = [];
  const figures: Record<string, Record<string, number>> = {};
  try {
    for (const [n, w] of workloads().entries()) {
      const runners: Record<string, Runner> = {
        raw: await rawRunner(w),
        computePool: await poolRunner(w, sessions),
        ...(piscina === undefined ? {} : { piscina: await piscinaRunner(w, piscina, n) }),
      };
      const paths = Object.keys(runners);
      for (const path of paths) await runners[path]!(); // warm-up: uploads, first-run allocations
      const samples: Record<string, Sample[]> = Object.fromEntries(paths.map((p) => [p, []]));
      for (let r = 0; r < ROUNDS; r++) {
        for (const path of paths.map((_, k) => paths[(k + r) % paths.length]!)) {
          for (let i = 0; i < PER_ROUND[w.name]; i++) samples[path]!.push(await runners[path]!());
        }
      }
      const own: Record<string, number> = {};
      for (const path of paths) {
        const trip = timingStats(samples[path]!.map((s) => s.roundTripMs));
        const forward = timingStats(samples[path]!.map((s) => s.inThreadMs));
        // Per call, so the forward's own noise cancels: what the pool adds around it.
        const added = timingStats(samples[path]!.map((s) => s.roundTripMs - s.inThreadMs));
        own[`${path}RoundTripMedianMs`] = round(trip.medianMs, 4);
        own[`${path}InThreadMedianMs`] = round(forward.medianMs, 4);
        own[`${path}AddedMedianUs`] = round(added.medianMs * 1000, 1);
        own[`${path}AddedP90Us`] = round(added.p90Ms * 1000, 1);
        rows.push({
          workload: w.name,
          path,
          'round trip ms (median)': round(trip.medianMs, 4),
          'in thread ms (median)': round(forward.medianMs, 4),
          'added µs (median)': round(added.medianMs * 1000, 1),
          'added µs (p90)': round(added.p90Ms * 1000, 1),
          n: trip.n,
        });
      }
      figures[w.name] = own;
    }
  } finally {
    await piscina?.close();
    await compute.close();
  }
  printTable(rows);
  console.log(JSON.stringify(figures, null, 2));
  const file = writeResults('pool', {
    figures,
    setup: {
      rounds: ROUNDS,
      perRound: PER_ROUND,
      dit: { model: card.id, batch: 2 * G, latent: card.latent, weights: 'resident in the thread' },
      threads: 1,
      intraOpThreads: 1,
      piscina: piscinaDir === undefined ? null : 'piscina 5.3.2, minThreads = maxThreads = 1',
    },
  });
  console.error(`wrote ${file}`);
}

await main();
