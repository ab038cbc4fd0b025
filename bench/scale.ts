// bench:scale — the coordinator and Redis with a large fleet registered: 1,000 and 10,000
// simulated workers (bench/lib/sim-worker-main.ts: many per process, one real ioredis connection
// each, the worker's own ManifestKeeper + WorkerRegistration writing manifests drawn from a mix of
// CPU / CUDA / WebGPU platforms and heartbeating at the production interval), a coordinator in its
// own process, 32 recorded wan21-mini lanes with a held job each, and two real worker processes
// serving a no-op lane. Per fleet size, after a baseline with no simulated worker in the same run:
// Redis load over a quiet window (heartbeats only: commands/s, % of one core), capability-matrix
// and GET /v1/fleet latency over sequential requests while heartbeats flow, enqueue → start of
// no-op jobs, coordinator RSS. Writes bench/results/scale.json.
// Env: BENCH_SCALE_WORKERS (default 1000,10000), BENCH_SCALE_PROCS (sim processes added per
// step, default 4), BENCH_SCALE_QUERIES (per query, default 200), BENCH_SCALE_FLEET_QUERIES
// (default 50), BENCH_SCALE_ENQUEUES (default 50), BENCH_SCALE_WINDOW_MS (default 15000).
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FlowfleetClient } from '@flowfleet/client';
import { DEFAULT_HEARTBEAT_TTL_MS } from '@flowfleet/worker';
import { Redis } from 'ioredis';
import { printTable, round, writeResults } from './lib/bench-report.js';
import { BENCH_TOKENS, benchPrefix, deletePrefix } from './lib/bench-fleet.js';
import { startBenchRedis } from './lib/redis-server.js';
import { recordLanes, SCALE_LANES } from './lib/scale-lanes.js';
import {
  measureEnqueueToStart,
  measureRedisLoad,
  timeQuery,
  type EnqueueFigures,
  type QueryFigures,
  type RedisLoad,
} from './lib/scale-measure.js';
import { SimFleet, startCoordinatorProcess } from './lib/sim-fleet.js';
import { SIM_PROFILES } from './lib/sim-platforms.js';
import { runBench } from './lib/teardown.js';
import { startWorkerProcesses, stopProcesses } from './lib/worker-processes.js';

function envInts(name: string, fallback: string): number[] {
  const values = (process.env[name] ?? fallback).split(',').map(Number);
  if (values.some((v) => !Number.isSafeInteger(v) || v < 0))
    throw new Error(`${name}: integers ≥ 0`);
  return values;
}

const SIZES = envInts('BENCH_SCALE_WORKERS', '1000,10000').sort((a, b) => a - b);
const [PROCS = 4] = envInts('BENCH_SCALE_PROCS', '4');
const [QUERIES = 200] = envInts('BENCH_SCALE_QUERIES', '200');
const [FLEET_QUERIES = 50] = envInts('BENCH_SCALE_FLEET_QUERIES', '50');
const [ENQUEUES = 50] = envInts('BENCH_SCALE_ENQUEUES', '50');
const [WINDOW_MS = 15_000] = envInts('BENCH_SCALE_WINDOW_MS', '15000');
const NOOP_CARD = 'bench-noop';
const REAL_WORKERS = 2;
const BEAT_MS = Math.floor(DEFAULT_HEARTBEAT_TTL_MS / 3);

interface Phase {
  readonly simulated: number;
  readonly loadAvg: readonly number[];
  readonly redis: RedisLoad;
  readonly simCpuPercentOfOneCore: number;
  readonly matrix: QueryFigures;
  readonly fleet: QueryFigures;
  readonly enqueue: EnqueueFigures;
  readonly coordinator: { rssMb: number; heapUsedMb: number; cpuMsPerMatrixQuery: number };
}

const loads = () => loadavg().map((l) => round(l, 2));

await runBench(async (teardown) => {
  const maxClients = Math.max(...SIZES) + 1_000;
  const redis = await startBenchRedis(['--maxclients', String(maxClients)]);
  teardown.add('redis-server', () => redis.stop());
  const stats = new Redis(redis.url, { maxRetriesPerRequest: null });
  teardown.add('stats connection', async () => stats.disconnect());
  const prefix = benchPrefix('scale');
  teardown.add('keys', () => deletePrefix(redis.url, prefix));
  const blobDir = mkdtempSync(join(tmpdir(), 'ff-scale-'));
  teardown.add('blob dir', async () => rmSync(blobDir, { recursive: true, force: true }));

  const coordinator = await startCoordinatorProcess({
    redisUrl: redis.url,
    prefix,
    blobDir,
    tokens: BENCH_TOKENS,
    noopCard: NOOP_CARD,
  });
  teardown.add('coordinator', () => coordinator.child.stop('SIGTERM', 10_000));
  const client = FlowfleetClient.create({ baseUrl: coordinator.url, token: BENCH_TOKENS.trainer });
  const real = await startWorkerProcesses('noop', REAL_WORKERS, {
    redisUrl: redis.url,
    coordinator: { url: coordinator.url, prefix },
    client,
    script: 'bench/lib/noop-worker-main.ts',
    env: { BENCH_NOOP_CARD: NOOP_CARD, FLOWFLEET_BACKEND: 'cpu' },
  });
  teardown.add('real workers', () => stopProcesses(real));
  const lanes = await recordLanes(client);
  const sims = new SimFleet({
    redisUrl: redis.url,
    prefix,
    processes: PROCS,
    rampMs: BEAT_MS,
    startTimeoutMs: 300_000,
  });
  teardown.add('simulated workers', () => sims.stop());
  console.log(
    `redis ${redis.version} (maxclients ${maxClients}); ${SCALE_LANES} lanes + 1 no-op lane; ` +
      `${REAL_WORKERS} real no-op workers; heartbeat every ${BEAT_MS} ms; load ${loads().join(' ')}`,
  );

  const phases: Phase[] = [];
  for (const size of [0, ...SIZES]) {
    await sims.growTo(size);
    const live = await waitForLive(client, size + REAL_WORKERS);
    console.log(`${size} simulated workers registered (${live} live); settling one beat`);
    await new Promise((resolve) => setTimeout(resolve, BEAT_MS));
    const loadAvg = loads();
    const simCpu0 = sims.cpuMs();
    const redisLoad = await measureRedisLoad(stats, WINDOW_MS);
    const simCpuPercent = ((sims.cpuMs() - simCpu0) / redisLoad.windowS / 1000) * 100;
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
    const memory = await coordinator.memory();
    phases.push({
      simulated: size,
      loadAvg,
      redis: redisLoad,
      simCpuPercentOfOneCore: round(simCpuPercent, 1),
      matrix,
      fleet,
      enqueue,
      coordinator: {
        rssMb: round(memory.rssMb, 1),
        heapUsedMb: round(memory.heapUsedMb, 1),
        cpuMsPerMatrixQuery: round(cpuPerMatrix, 2),
      },
    });
    printPhase(phases.at(-1)!);
  }

  const byWorkers = <T>(pick: (phase: Phase) => T) =>
    Object.fromEntries(phases.map((phase) => [`w${phase.simulated}`, pick(phase)]));
  const base = phases[0]!;
  const top = phases.at(-1)!;
  printTable(
    phases.map((p) => ({
      workers: p.simulated,
      'matrix p50/p99 ms': `${p.matrix.p50Ms} / ${p.matrix.p99Ms}`,
      'fleet p50/p99 ms': `${p.fleet.p50Ms} / ${p.fleet.p99Ms}`,
      'enq→start p50/p99 ms': `${p.enqueue.enqueueToStart.p50Ms} / ${p.enqueue.enqueueToStart.p99Ms}`,
      'redis cmd/s': p.redis.commandsPerSec,
      'redis %core': p.redis.cpuPercentOfOneCore,
      'redis MB': p.redis.usedMemoryMb,
      'coord RSS MB': p.coordinator.rssMb,
      load: p.loadAvg[0] ?? 0,
    })),
  );
  const file = writeResults('scale', {
    figures: {
      matrixP50Ms: byWorkers((p) => p.matrix.p50Ms),
      matrixP99Ms: byWorkers((p) => p.matrix.p99Ms),
      matrixP99GoalMs: 100,
      fleetP50Ms: byWorkers((p) => p.fleet.p50Ms),
      fleetP99Ms: byWorkers((p) => p.fleet.p99Ms),
      enqueueToStartP50Ms: byWorkers((p) => p.enqueue.enqueueToStart.p50Ms),
      enqueueToStartP99Ms: byWorkers((p) => p.enqueue.enqueueToStart.p99Ms),
      heartbeatRedisCommandsPerSec: byWorkers((p) => p.redis.commandsPerSec),
      heartbeatRedisCpuPercentOfOneCore: byWorkers((p) => p.redis.cpuPercentOfOneCore),
      redisUsedMemoryMb: byWorkers((p) => p.redis.usedMemoryMb),
      coordinatorRssMb: byWorkers((p) => p.coordinator.rssMb),
      ratiosTopVsBaseline: {
        matrixP99: round(top.matrix.p99Ms / base.matrix.p99Ms, 2),
        fleetP99: round(top.fleet.p99Ms / base.fleet.p99Ms, 2),
        enqueueToStartP50: round(
          top.enqueue.enqueueToStart.p50Ms / base.enqueue.enqueueToStart.p50Ms,
          2,
        ),
        coordinatorRss: round(top.coordinator.rssMb / base.coordinator.rssMb, 2),
      },
    },
    setup: {
      redis: redis.version,
      mode: 'single',
      sizes: SIZES,
      simProcessesPerStep: PROCS,
      heartbeatIntervalMs: BEAT_MS,
      lanes: lanes.length + 1,
      realWorkers: `${REAL_WORKERS} bench/lib/noop-worker-main.ts processes (cpu backend) serving the no-op lane`,
      queries: { matrix: QUERIES, fleet: FLEET_QUERIES, enqueues: ENQUEUES, sequential: true },
      redisWindowMs: WINDOW_MS,
      platformMix: SIM_PROFILES.map((p) => ({ profile: p.name, share: p.share })),
    },
    phases,
    notes: [
      'Baseline = w0: the same coordinator, lanes and 2 real workers with no simulated worker registered, measured in the same run before the fleet grows.',
      'Redis load is measured over a quiet window (no queries, no jobs): heartbeats (SET … PX) plus the real workers’ and coordinator’s idle traffic.',
      'Query latency is wall time of sequential requests from this process to the coordinator process (HTTP, body read), heartbeats flowing.',
      'enqueue → start = the job’s startedAt (BullMQ processedOn, ms resolution) minus the time just before POST /v1/rollouts; jobs one at a time.',
    ],
  });
  console.log(`wrote ${file}`);
});

/** Polls GET /v1/fleet until `want` workers are live. */
async function waitForLive(client: FlowfleetClient, want: number): Promise<number> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const fleet = await client.fleet({ timeoutMs: 60_000 });
    if (fleet.live >= want) return fleet.live;
    if (Date.now() > deadline) throw new Error(`only ${fleet.live}/${want} workers live`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function printPhase(p: Phase): void {
  console.log(
    `  w${p.simulated}: matrix p50 ${p.matrix.p50Ms} p99 ${p.matrix.p99Ms} ms (${p.matrix.responseKb} kB); ` +
      `fleet p50 ${p.fleet.p50Ms} p99 ${p.fleet.p99Ms} ms (${p.fleet.responseKb} kB); ` +
      `enqueue→start p50 ${p.enqueue.enqueueToStart.p50Ms} p99 ${p.enqueue.enqueueToStart.p99Ms} ms; ` +
      `redis ${p.redis.commandsPerSec} cmd/s ${p.redis.cpuPercentOfOneCore}% core; ` +
      `coordinator RSS ${p.coordinator.rssMb} MB`,
  );
}
