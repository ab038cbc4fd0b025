// bench:scale — the coordinator and Redis with a large fleet registered: 1,000 and 10,000
// simulated workers (bench/lib/sim-worker-main.ts: many per process, one real Redis connection
// each, the worker's own ManifestKeeper + WorkerRegistration writing manifests drawn from a mix of
// CPU / CUDA / WebGPU platforms and heartbeating at the production interval), a coordinator in its
// own process, 32 recorded wan21-mini lanes with a held job each, and two real worker processes
// serving a no-op lane; on one redis-server and on a local 3-master Redis Cluster. Per mode and
// fleet size, after a baseline with no simulated worker in the same run: Redis load over a quiet
// window (heartbeats only: commands/s, % of one core, per master), capability-matrix and
// GET /v1/fleet latency over sequential requests while heartbeats flow, enqueue → start of no-op
// jobs, a burst of held jobs over the 32 lanes (the per-master command split), coordinator RSS.
// Writes bench/results/scale.json.
// Env: BENCH_SCALE_WORKERS (default 1000,10000), BENCH_SCALE_MODES (standalone,cluster),
// BENCH_SCALE_PROCS (sim processes added per step, default 4), BENCH_SCALE_QUERIES (matrix
// queries, default 200), BENCH_SCALE_FLEET_QUERIES (default 50), BENCH_SCALE_ENQUEUES (default
// 50), BENCH_SCALE_BURST (held jobs per burst, default 320), BENCH_SCALE_WINDOW_MS (15000),
// BENCH_SCALE_RESULTS (results file name, default scale).
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FlowfleetClient } from '@flowfleet/client';
import { RedisModeSchema, type RedisMode } from '@flowfleet/redis';
import { DEFAULT_HEARTBEAT_TTL_MS } from '@flowfleet/worker';
import { round, writeResults } from './lib/bench-report.js';
import { BENCH_TOKENS, benchPrefix } from './lib/bench-fleet.js';
import { startScaleBackend, type ScaleBackend } from './lib/scale-backend.js';
import { heldLaneJob, recordLanes, SCALE_LANES } from './lib/scale-lanes.js';
import { measureEnqueueToStart, measureLoad, timeQuery } from './lib/scale-measure.js';
import { modeFigures, printPhase, printPhases, type ScalePhase } from './lib/scale-report.js';
import { SimFleet, startCoordinatorProcess } from './lib/sim-fleet.js';
import { SIM_PROFILES } from './lib/sim-platforms.js';
import { runBench, type Teardown } from './lib/teardown.js';
import { startWorkerProcesses, stopProcesses } from './lib/worker-processes.js';

function envInts(name: string, fallback: string): number[] {
  const values = (process.env[name] ?? fallback).split(',').map(Number);
  if (values.some((v) => !Number.isSafeInteger(v) || v < 0))
    throw new Error(`${name}: integers ≥ 0`);
  return values;
}

const SIZES = envInts('BENCH_SCALE_WORKERS', '1000,10000').sort((a, b) => a - b);
const MODES = (process.env['BENCH_SCALE_MODES'] ?? 'standalone,cluster')
  .split(',')
  .map((mode) => RedisModeSchema.parse(mode));
const [PROCS = 4] = envInts('BENCH_SCALE_PROCS', '4');
const [QUERIES = 200] = envInts('BENCH_SCALE_QUERIES', '200');
const [FLEET_QUERIES = 50] = envInts('BENCH_SCALE_FLEET_QUERIES', '50');
const [ENQUEUES = 50] = envInts('BENCH_SCALE_ENQUEUES', '50');
const [BURST = 320] = envInts('BENCH_SCALE_BURST', '320');
const [WINDOW_MS = 15_000] = envInts('BENCH_SCALE_WINDOW_MS', '15000');
const NOOP_CARD = 'bench-noop';
const REAL_WORKERS = 2;
const BEAT_MS = Math.floor(DEFAULT_HEARTBEAT_TTL_MS / 3);
const MAX_CLIENTS = Math.max(...SIZES) + 1_000;
const loads = () => loadavg().map((l) => round(l, 2));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

process.setMaxListeners(64); // one exit hook per child process

/** One mode: its Redis, coordinator, real workers, lanes, then the fleet grown size by size. */
async function runMode(
  mode: RedisMode,
  teardown: Teardown,
  onPhase: (phases: readonly ScalePhase[], backend: ScaleBackend) => void,
): Promise<{ backend: ScaleBackend; phases: ScalePhase[] }> {
  const backend = await startScaleBackend(mode, MAX_CLIENTS);
  teardown.add(`redis (${mode})`, () => backend.stop());
  const prefix = benchPrefix(`scale-${mode}`);
  const blobDir = mkdtempSync(join(tmpdir(), 'ff-scale-'));
  teardown.add('blob dir', async () => rmSync(blobDir, { recursive: true, force: true }));
  const modeEnv = { FLOWFLEET_REDIS_MODE: mode };
  const coordinator = await startCoordinatorProcess({
    redisUrl: backend.url,
    prefix,
    blobDir,
    tokens: BENCH_TOKENS,
    noopCard: NOOP_CARD,
    env: modeEnv,
  });
  teardown.add(`coordinator (${mode})`, () => coordinator.child.stop('SIGTERM', 10_000));
  const client = FlowfleetClient.create({ baseUrl: coordinator.url, token: BENCH_TOKENS.trainer });
  const real = await startWorkerProcesses(`noop-${mode}`, REAL_WORKERS, {
    redisUrl: backend.url,
    coordinator: { url: coordinator.url, prefix },
    client,
    script: 'bench/lib/noop-worker-main.ts',
    env: { BENCH_NOOP_CARD: NOOP_CARD, FLOWFLEET_BACKEND: 'cpu', ...modeEnv },
  });
  teardown.add(`real workers (${mode})`, () => stopProcesses(real));
  const lanes = await recordLanes(client);
  const sims = new SimFleet({
    redisUrl: backend.url,
    prefix,
    mode,
    processes: PROCS,
    rampMs: BEAT_MS,
    startTimeoutMs: 600_000,
  });
  teardown.add(`simulated workers (${mode})`, () => sims.stop());
  console.log(
    `${mode}: redis ${backend.version} × ${backend.masters.length} master(s) (maxclients ${MAX_CLIENTS}); ` +
      `${SCALE_LANES} lanes + 1 no-op lane; ${REAL_WORKERS} real no-op workers; heartbeat every ${BEAT_MS} ms`,
  );
  const phases: ScalePhase[] = [];
  for (const size of [0, ...SIZES]) {
    const growStarted = performance.now();
    const added = size - sims.size;
    await sims.growTo(size);
    const live = await waitForLive(client, size + REAL_WORKERS);
    const registrationS = (performance.now() - growStarted) / 1000;
    console.log(
      `${mode}: ${size} simulated workers registered (${live} live), ${added} new in ${round(registrationS, 1)} s; settling one beat`,
    );
    await sleep(BEAT_MS);
    const loadAvg = loads();
    const simCpu0 = sims.cpuMs();
    const redis = await measureLoad(backend.masters, () => sleep(WINDOW_MS));
    const simCpuPercent = ((sims.cpuMs() - simCpu0) / redis.windowS / 1000) * 100;
    const cpu0 = coordinator.cpuMs();
    const matrix = await timeQuery(coordinator.url, BENCH_TOKENS.viewer, '/v1/fleet/matrix', {
      warmup: 5,
      count: QUERIES,
    });
    const cpuPerMatrix = (coordinator.cpuMs() - cpu0) / (QUERIES + 5);
    const fleet = await timeQuery(coordinator.url, BENCH_TOKENS.viewer, '/v1/fleet', {
      warmup: 3,
      count: FLEET_QUERIES,
    });
    const enqueue = await measureEnqueueToStart(client, NOOP_CARD, { warmup: 5, count: ENQUEUES });
    const burstStarted = performance.now();
    const burst = await measureLoad(backend.masters, async () => {
      for (let i = 0; i < BURST; i += 1) await client.enqueueRollouts(heldLaneJob(i));
    });
    const burstSeconds = (performance.now() - burstStarted) / 1000;
    const memory = await coordinator.memory();
    phases.push({
      mode,
      simulated: size,
      loadAvg,
      registration: {
        added,
        seconds: round(registrationS, 1),
        perSec: added === 0 ? 0 : round(added / registrationS, 1),
      },
      redis,
      simCpuPercentOfOneCore: round(simCpuPercent, 1),
      matrix,
      fleet,
      enqueue,
      laneBurst: { jobs: BURST, jobsPerSec: round(BURST / burstSeconds, 1), redis: burst },
      coordinator: {
        rssMb: round(memory.rssMb, 1),
        heapUsedMb: round(memory.heapUsedMb, 1),
        cpuMsPerMatrixQuery: round(cpuPerMatrix, 2),
      },
    });
    printPhase(phases.at(-1)!);
    onPhase(phases, backend);
  }
  if (lanes.length !== SCALE_LANES) throw new Error('lane count changed');
  // Free the machine for the next mode.
  await sims.stop();
  await stopProcesses(real);
  await coordinator.child.stop('SIGTERM', 10_000);
  await backend.stop();
  return { backend, phases };
}

await runBench(async (teardown) => {
  const loadBefore = loads();
  const runs: { backend: ScaleBackend; phases: readonly ScalePhase[] }[] = [];
  // Written after every phase (complete: false until the last), so a cut-short run keeps its figures.
  const write = (complete: boolean): string => {
    const phases = runs.flatMap((run) => run.phases);
    const byMode = Object.fromEntries(
      runs.map((run) => [run.backend.mode, modeFigures(run.phases)]),
    );
    const file = writeResults(process.env['BENCH_SCALE_RESULTS'] ?? 'scale', {
      figures: {
        ...(byMode['standalone'] ?? {}),
        matrixP99GoalMs: 100,
        ...(byMode['cluster'] === undefined ? {} : { cluster: byMode['cluster'] }),
      },
      setup: {
        modes: runs.map((run) => ({
          mode: run.backend.mode,
          redis: run.backend.version,
          masters: run.backend.masters.length,
        })),
        sizes: SIZES,
        simProcessesPerStep: PROCS,
        heartbeatIntervalMs: BEAT_MS,
        lanes: `${SCALE_LANES} wan21-mini lanes (held jobs, nobody consumes) + 1 no-op lane`,
        realWorkers: `${REAL_WORKERS} bench/lib/noop-worker-main.ts processes (cpu backend) serving the no-op lane`,
        queries: {
          matrix: QUERIES,
          fleet: FLEET_QUERIES,
          enqueues: ENQUEUES,
          burst: BURST,
          sequential: true,
        },
        redisWindowMs: WINDOW_MS,
        platformMix: SIM_PROFILES.map((p) => ({ profile: p.name, share: p.share })),
        loadAverageBefore: loadBefore,
        loadAverageAfter: loads(),
      },
      phases,
      complete,
      notes: [
        'figures.* are the single redis-server runs, figures.cluster.* the 3-master cluster runs; w0 is the baseline of the same run: the same coordinator, lanes and 2 real workers with no simulated worker registered.',
        'Heartbeat load: INFO commandstats / cpu deltas over a quiet window (no queries, no jobs): the simulated heartbeats (SET … PX) plus the idle traffic of the real workers and the coordinator.',
        'Query latency: wall time of sequential requests from this process to the coordinator process (HTTP, body read) while heartbeats flow.',
        'enqueue → start: the job’s startedAt (BullMQ processedOn, ms resolution) minus the time just before POST /v1/rollouts; one job at a time.',
        'Lane burst: held jobs enqueued one after another round-robin over the 32 lanes; its per-master command share is where lane traffic lands (control-plane keys — heartbeats, manifests, lane records — share one slot, so heartbeats all land on one master).',
        'The machine is shared with other engineers: see loadAvg per phase.',
      ],
    });
    return file;
  };
  for (const mode of MODES) {
    const index = runs.length;
    await runMode(mode, teardown, (phases, backend) => {
      runs[index] = { backend, phases: [...phases] };
      write(false);
    });
  }
  printPhases(runs.flatMap((run) => run.phases));
  console.log(`wrote ${write(true)}`);
});

/** Polls GET /v1/fleet until `want` workers are live. */
async function waitForLive(client: FlowfleetClient, want: number): Promise<number> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const fleet = await client.fleet({ timeoutMs: 60_000 });
    if (fleet.live >= want) return fleet.live;
    if (Date.now() > deadline) throw new Error(`only ${fleet.live}/${want} workers live`);
    await sleep(500);
  }
}
