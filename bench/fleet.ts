// bench:fleet — the fleet's end-to-end efficiency on real rollouts: wan21-mini, G = 4, 10 SDE
// steps, CFG 4.5, latent 4×16×16, on fleets of N = 1 and 2 worker processes (ort-cpu,
// concurrency 1, 1 ORT intra-op thread: production settings), rollouts enqueued by a trainer
// through the SDK over HTTP in rounds and each result fetched and read. The baseline, in the
// same run: a raw ONNX Runtime loop in its own process (bench/lib/raw-loop-process.ts: the card's
// captured graphs on bare sessions with the worker's session options, the same maths, the same
// weights; checked bit-identical to the fleet's results), alone and N at once. Rounds interleave
// every path (rotating order) so load drift hits all of them; figures are medians of per-round
// ratios. Then the dispatch CPU per job on no-op jobs (bench/lib/noop-dispatch.ts).
// `--profile` profiles the N = 1 worker and the raw loop (`node --cpu-prof`, every thread) and
// prints where a rollout's time goes (bench/lib/profile-split.ts) instead of writing fleet.json.
// Flags: --rounds, --rollouts (per worker per round), --noop-jobs (0: skip), --poll-ms and
// --max-poll-ms, --long-poll-ms (the trainer's waitFor; 0 polls), --profile; BENCH_BLOB_PARENT puts the blob store there.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { FlowfleetClient } from '@flowfleet/client';
import { Redis } from 'ioredis';
import { round, writeResults } from './lib/bench-report.js';
import { BENCH_TOKENS, benchPrefix, startBenchCoordinator } from './lib/bench-fleet.js';
import { fleetPath, rawPath, runRounds, type BenchPath } from './lib/fleet-paths.js';
import { median, printFigures, reportProfile, summarizePaths } from './lib/fleet-report.js';
import { measureDispatch, type DispatchCost } from './lib/noop-dispatch.js';
import { bytesSha256, startRawLoop, type RawProcessWorkload } from './lib/raw-loop-client.js';
import { startBenchRedis } from './lib/redis-server.js';
import { runBench } from './lib/teardown.js';
import { trainerRound } from './lib/trainer-round.js';
import { startWorkerProcesses, stopProcesses } from './lib/worker-processes.js';

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '4' },
    rollouts: { type: 'string', default: '8' },
    'noop-jobs': { type: 'string', default: '300' },
    'long-poll-ms': { type: 'string', default: '10000' },
    'poll-ms': { type: 'string', default: '25' },
    'max-poll-ms': { type: 'string', default: '100' },
    profile: { type: 'boolean', default: false },
  },
});
const ROUNDS = Number(flags.rounds);
const PER_WORKER = Number(flags.rollouts);
const NOOP_JOBS = Number(flags['noop-jobs']);
const POLLING = {
  longPollMs: Number(flags['long-poll-ms']),
  pollMs: Number(flags['poll-ms']),
  maxPollMs: Number(flags['max-poll-ms']),
};
const PROFILE = flags.profile;
const FLEETS = [1, 2] as const;
const WIDEST = Math.max(...FLEETS);

const WORKLOAD: RawProcessWorkload = {
  model: 'wan21-mini',
  prompt: 'a red fox running through fresh snow',
  seeds: [101, 102, 103, 104],
  steps: 10,
  shift: 3,
  guidanceScale: 4.5,
  noiseLevel: 0.7,
  shape: { frames: 4, height: 16, width: 16 },
  weightsSeed: 0, // the worker's version 0 (INITIAL_WEIGHTS_SEED)
  intraOpThreads: 1,
};
const { model, steps, shift, guidanceScale, noiseLevel, shape } = WORKLOAD;
const COMMON = { model, steps, shift, guidanceScale, noiseLevel, shape, sampler: 'sde' } as const;
const GROUP = { prompt: WORKLOAD.prompt, seeds: WORKLOAD.seeds };
const RAW = 'raw ×1';
const RAW_AT_ONCE = `raw ×${WIDEST} at once`;

const profDir = PROFILE ? mkdtempSync(join(tmpdir(), 'ff-fleet-prof-')) : '';
const profArgs = (who: string) =>
  PROFILE ? ['--cpu-prof', '--cpu-prof-dir', join(profDir, who), '--cpu-prof-interval', '250'] : [];
const loads = () => loadavg().map((l) => round(l, 2));

await runBench(async (teardown) => {
  const loadBefore = loads();
  const redis = await startBenchRedis();
  teardown.add('redis-server', () => redis.stop());
  const stats = new Redis(redis.url, { maxRetriesPerRequest: null });
  teardown.add('stats connection', async () => stats.disconnect());
  const blobDir = mkdtempSync(join(process.env['BENCH_BLOB_PARENT'] ?? tmpdir(), 'ff-fleet-'));
  teardown.add('blob dir', async () => rmSync(blobDir, { recursive: true, force: true }));

  const dispatch: DispatchCost | undefined =
    NOOP_JOBS > 0
      ? await measureDispatch({
          redisUrl: redis.url,
          stats,
          blobParent: blobDir,
          jobs: NOOP_JOBS,
          teardown,
        })
      : undefined;

  const raws = await Promise.all(
    Array.from({ length: WIDEST }, (_, i) =>
      startRawLoop(`raw-${i + 1}`, WORKLOAD, i === 0 ? profArgs('raw') : []),
    ),
  );
  teardown.add('raw loops', () => Promise.all(raws.map((raw) => raw.close())));
  const storeMs = new Map<string, number[]>();
  const fleets = [];
  for (const n of FLEETS) {
    const stores: number[] = [];
    storeMs.set(`n${n}`, stores);
    const coordinator = await startBenchCoordinator(
      redis.url,
      benchPrefix(`n${n}`),
      join(blobDir, `n${n}`),
      (_id, file, ms) => file === 'result.safetensors' && stores.push(ms),
    );
    teardown.add(`coordinator n${n}`, () => coordinator.close());
    const client = FlowfleetClient.create({
      baseUrl: coordinator.url,
      token: BENCH_TOKENS.trainer,
    });
    const workers = await startWorkerProcesses(`fleet-n${n}`, n, {
      redisUrl: redis.url,
      coordinator,
      client,
      nodeArgs: n === 1 ? profArgs('worker') : [],
    });
    teardown.add(`workers n${n}`, () => stopProcesses(workers));
    fleets.push({ n, client, workers });
  }

  // Warm-up: every worker has captured its graphs; the fleet's results are the raw loop's, bit
  // for bit.
  const reference = await raws[0]!.run(1);
  let bitIdentical = true;
  for (const { n, client } of fleets) {
    for (let tries = 0; ; tries++) {
      const warm = await trainerRound(client, 2 * n, GROUP, COMMON, POLLING);
      bitIdentical &&=
        bytesSha256(warm.lastFile.latents) === reference.latentsSha256 &&
        warm.lastFile.logProbs !== null &&
        bytesSha256(warm.lastFile.logProbs) === reference.logProbsSha256;
      if (new Set(warm.jobs.map((job) => job.worker)).size === n) break;
      if (tries >= 5) throw new Error(`fleet N=${n}: not every worker took a warm-up job`);
    }
  }
  for (const stores of storeMs.values()) stores.length = 0;

  const paths: BenchPath[] = [
    rawPath(RAW, raws.slice(0, 1), PER_WORKER),
    rawPath(RAW_AT_ONCE, raws, PER_WORKER),
    ...fleets.map(({ n, client, workers }) =>
      fleetPath({
        name: `fleet N=${n}`,
        client,
        workers,
        perWorker: PER_WORKER,
        group: GROUP,
        common: COMMON,
        polling: POLLING,
        stats,
      }),
    ),
  ];
  console.log(
    `${ROUNDS} rounds × ${PER_WORKER} rollouts per worker; trainer ${POLLING.longPollMs > 0 ? `long-polls (${POLLING.longPollMs} ms)` : `polls ${POLLING.pollMs}–${POLLING.maxPollMs} ms`}; load average ${loadBefore.join(' ')}`,
  );
  const samples = await runRounds(paths, ROUNDS, (r) =>
    console.log(`round ${r + 1}/${ROUNDS} done`),
  );
  const loadAfter = loads();

  const rows = summarizePaths(paths, samples, RAW);
  printFigures(rows, dispatch);
  const fleetRow = (n: number) => rows.find((row) => row.path === `fleet N=${n}`)!;
  const storeP50 = Object.fromEntries([...storeMs].map(([k, v]) => [k, round(median(v), 2)]));
  console.log(
    `\nfleetEfficiency: n1 ${fleetRow(1).efficiency}, n2 ${fleetRow(2).efficiency} (goal ≥ 0.97); ` +
      `results bit-identical to the raw loop: ${bitIdentical}; coordinator store of result.safetensors p50 ms: ${JSON.stringify(storeP50)}`,
  );
  console.log(`load average before ${loadBefore.join(' ')}, after ${loadAfter.join(' ')}`);

  if (PROFILE) {
    await Promise.all([
      ...fleets.map((f) => stopProcesses(f.workers)),
      ...raws.map((r) => r.close()),
    ]);
    const file = reportProfile({
      dir: profDir,
      fleetRounds: samples.get('fleet N=1')!,
      rawRounds: samples.get(RAW)!,
      steps,
      setup: { rounds: ROUNDS, rolloutsPerWorker: PER_WORKER, loadBefore, loadAfter },
    });
    console.log(`wrote ${file}`);
    return;
  }
  const byN = (pick: (row: (typeof rows)[number]) => number) =>
    Object.fromEntries(FLEETS.map((n) => [`n${n}`, pick(fleetRow(n))]));
  const rawRow = rows.find((row) => row.path === RAW)!;
  const wide = rows.find((row) => row.path === RAW_AT_ONCE)!;
  const file = writeResults('fleet', {
    figures: {
      fleetEfficiency: byN((row) => row.efficiency),
      fleetEfficiencyGoal: 0.97,
      fleetEfficiencySteadyState: byN((row) => row.steadyEfficiency),
      rolloutsPerSec: {
        raw: rawRow.rolloutsPerSec,
        [`raw${WIDEST}AtOnce`]: wide.rolloutsPerSec,
        ...byN((row) => row.rolloutsPerSec),
      },
      msPerRollout: {
        raw: rawRow.msPerRolloutPerWorker,
        [`raw${WIDEST}AtOnce`]: wide.msPerRolloutPerWorker,
        ...byN((row) => row.msPerRolloutPerWorker),
      },
      ...(dispatch === undefined
        ? {}
        : {
            dispatchCpuUsPerJob: {
              node: round(dispatch.nodeUs, 0),
              nodeCoordinator: round(dispatch.coordinatorNodeUs, 0),
              nodeWorker: round(dispatch.workerNodeUs, 0),
              redis: round(dispatch.redisUs, 0),
            },
          }),
      resultsBitIdenticalToRaw: bitIdentical,
    },
    setup: {
      workload: { ...COMMON, group: WORKLOAD.seeds.length },
      rounds: ROUNDS,
      rolloutsPerWorkerPerRound: PER_WORKER,
      trainerPolling: POLLING,
      workers:
        'apps/worker/src/main.ts processes, FLOWFLEET_BACKEND=ort-cpu FLOWFLEET_CONCURRENCY=1 FLOWFLEET_ORT_INTRA_OP_THREADS=1',
      rawLoop:
        "bench/lib/raw-loop-process.ts: the card's captured graphs on bare onnxruntime-node sessions (ortSessionOptions, cpu, 1 thread), one process each",
      redis: redis.version,
      loadAverageBefore: loadBefore,
      loadAverageAfter: loadAfter,
      coordinatorStoreResultP50Ms: storeP50,
      ...(dispatch === undefined ? {} : { dispatch }),
    },
    paths: rows,
    notes: [
      "fleetEfficiency.nN = fleet rollouts/s ÷ (N × raw rollouts/s): the median over rounds of the per-round ratio to the raw ×1 run of the same round. Fleet rollouts/s = a round's rollouts ÷ (first enqueue → last result read).",
      "fleetEfficiencySteadyState uses the server's finish times instead (completions after each worker's first, over their span): it leaves out a round's fill (enqueue, first pick-up) and drain (last upload, the trainer noticing, the fetch).",
      `${RAW_AT_ONCE}: ${WIDEST} raw processes at the same time — what this machine allows ${WIDEST} workers at best (cores, memory bandwidth, other load).`,
      "CPU ms/rollout: the worker processes (fleets) or raw processes, every thread; coordinator+SDK is this process (the coordinator and the trainer's calls); Redis from INFO.",
    ],
  });
  console.log(`wrote ${file}`);
});
