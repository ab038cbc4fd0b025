// bench:sync — weight-sync propagation under a per-process egress cap (a token bucket, the same
// one the coordinator's blob route and every worker's peer server pay into), so the
// coordinator's link is the bottleneck as on a real network. Workers are real bench workers
// (bench-fleet's startBenchWorkers, serving a no-op card sized to the payloads:
// bench/lib/sync-payloads.ts) spread over up to BENCH_SYNC_HOSTS (4) host processes
// (bench/lib/sync-worker-host.ts), so the simulated hosts use both cores; the coordinator runs
// here, Redis in its own process. Three payloads — a 258 MB float32 checkpoint, a ~3 % delta of
// it, a 42.5 MB rank-32 LoRA adapter on every q/k/v/o — and two modes, star (peer servers off:
// every worker fetches from the coordinator) and peer fan-out (the coordinator's pipelined
// chain). Time: from just before POST /v1/weights/dit/sync until every worker's ack is in the
// acks hash (polled every 5 ms), each ack `ok`. Baseline: star with N = 1 — one worker receiving
// the same bytes under the same cap — in the same run, beside the floor bytes / cap. Every
// (mode, N, cap) gets a fresh coordinator prefix and fresh workers. CPU: every host process's
// CPU (all threads) over each sync, per worker, and this process's (the coordinator's).
//
// Two phases. The grid: N = 1, 8, 32 × both modes × the three payloads at BENCH_SYNC_RATE
// (default 50 MB/s). On 2 shared cores that cap is only faithful while the workers' CPU fits:
// a fan-out worker receives and serves every byte, so N workers need N · (CPU-s per worker) /
// (bytes / cap) cores, and at N ≥ 8 that is more than 2 — the grid's fan-out rows there measure
// the box's CPU, not the link (the `worker cores busy` column shows it). The link-bound point:
// the full checkpoint again, star N = 1 and fan-out N = 8, 32 (BENCH_SYNC_LINK_WORKERS), at the
// cap where the grid's measured CPU of the largest fan-out fleet fits BENCH_SYNC_CPU_CORES (1.5
// of the 2 cores; the rest is the coordinator's, Redis's and the OS's): cap = 1.5 · bytes /
// (N · CPU-s per worker), rounded down to 0.5 MB/s, at least 2 MB/s (BENCH_SYNC_LINK_RATE
// overrides). There the link is the bottleneck, as on a network where each host has its own
// CPU, and peerFanoutRatio.n8/n32 in bench/results/sync.json come from it (figures.grid keeps
// the grid's). Prints a table and writes bench/results/sync.json after every fleet size.
// Env: BENCH_SYNC_RATE, BENCH_SYNC_WORKERS (1,32,8), BENCH_SYNC_MODES (star,fanout),
// BENCH_SYNC_LORA_MAX_N (64), BENCH_SYNC_HOSTS, BENCH_SYNC_LINK_WORKERS, BENCH_SYNC_LINK_RATE,
// BENCH_SYNC_CPU_CORES, BENCH_SYNC_CPU_PROF (a directory: V8 CPU profiles of every host).
import { mkdtempSync, rmSync } from 'node:fs';
import { freemem, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCardRegistry } from '@flowfleet/models';
import { fleetKeys, SyncAckSchema, type SyncAck } from '@flowfleet/protocol';
import { Redis } from 'ioredis';
import { printTable, round, writeResults } from './lib/bench-report.js';
import {
  BENCH_TOKENS,
  benchPrefix,
  startBenchCoordinator,
  type BenchCoordinator,
} from './lib/bench-fleet.js';
import { request, spawnTsx, type BenchChild } from './lib/child-process.js';
import { startBenchRedis } from './lib/redis-server.js';
import {
  buildSyncPayloads,
  SYNC_CARD,
  SYNC_CONFIG,
  type SyncPayloads,
} from './lib/sync-payloads.js';
import { runBench } from './lib/teardown.js';
import { stopProcesses } from './lib/worker-processes.js';

const RATE = Number(process.env['BENCH_SYNC_RATE'] ?? 50e6);
const FLEET_SIZES = (process.env['BENCH_SYNC_WORKERS'] ?? '1,32,8').split(',').map(Number);
/**
 * LoRA syncs are measured up to this many workers (BENCH_SYNC_LORA_MAX_N; default all).
 */
const LORA_MAX_N = Number(process.env['BENCH_SYNC_LORA_MAX_N'] ?? 64);
/** Fan-out fleets measured again at the link-bound cap (BENCH_SYNC_LINK_WORKERS; '' skips). */
const LINK_WORKERS = (process.env['BENCH_SYNC_LINK_WORKERS'] ?? '8,32')
  .split(',')
  .filter((n) => n !== '')
  .map(Number);
/** That cap, bytes/s (BENCH_SYNC_LINK_RATE); default: derived from the grid's measured CPU. */
const LINK_RATE =
  process.env['BENCH_SYNC_LINK_RATE'] === undefined
    ? undefined
    : Number(process.env['BENCH_SYNC_LINK_RATE']);
/** Cores the workers may use at the link-bound cap (BENCH_SYNC_CPU_CORES; of 2, the rest is the coordinator's, Redis's, the OS's). */
const CPU_BUDGET_CORES = Number(process.env['BENCH_SYNC_CPU_CORES'] ?? 1.5);
/** Worker host processes (BENCH_SYNC_HOSTS): the simulated hosts share these event loops. */
const HOSTS = Number(process.env['BENCH_SYNC_HOSTS'] ?? 4);
const HOST_START_TIMEOUT_MS = 180_000;
/** V8 CPU profiles of every host process (and its threads) go here (BENCH_SYNC_CPU_PROF). */
const CPU_PROF_DIR = process.env['BENCH_SYNC_CPU_PROF'];
const ALL_MODES = ['star', 'fanout'] as const;
/** Which modes run (BENCH_SYNC_MODES, default both: exploratory runs may take one). */
const MODES = (process.env['BENCH_SYNC_MODES'] ?? 'star,fanout')
  .split(',')
  .filter((mode): mode is Mode => (ALL_MODES as readonly string[]).includes(mode));
const PAYLOADS = ['full', 'delta', 'lora'] as const;
const ACK_TIMEOUT_MS = 900_000;
const COMPONENT = 'dit';

type Mode = (typeof ALL_MODES)[number];
type Payload = (typeof PAYLOADS)[number];

interface Measured {
  readonly mode: Mode;
  readonly workers: number;
  readonly payload: Payload;
  /** The egress cap of every process in this fleet, bytes/s. */
  readonly rate: number;
  readonly ms: number;
  /** Bytes each worker fetched (from its acks; the same for all). */
  readonly fetchedBytes: number;
  /** Bytes all workers took from the coordinator / from peers. */
  readonly fromCoordinator: number;
  readonly fromPeers: number;
  readonly fallbacks: number;
  readonly ackP50Ms: number;
  /** CPU seconds (user + system, every thread) of the worker hosts during the sync, per worker. */
  readonly workerCpuS: number;
  /** CPU seconds of this process (the coordinator, and the bench's ack polling) during the sync. */
  readonly coordinatorCpuS: number;
}

async function upload(coordinator: BenchCoordinator, bytes: Uint8Array): Promise<string> {
  const response = await coordinator.api('/v1/blobs', {
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream' },
    body: bytes,
  });
  if (response.status !== 201) throw new Error(`PUT blob: ${response.status}`);
  return ((await response.json()) as { sha256: string }).sha256;
}

interface SyncRun {
  readonly ms: number;
  readonly acks: SyncAck[];
  readonly wallStart: number;
  readonly hostCpuS: number;
  readonly coordinatorCpuS: number;
}

/** CPU seconds the host processes have used so far (every thread of each). */
async function hostsCpuS(hosts: readonly BenchChild[]): Promise<number> {
  const usages = await Promise.all(
    hosts.map((host) => request<{ cpu: NodeJS.CpuUsage }>(host, { op: 'cpu' })),
  );
  return usages.reduce((sum, { cpu }) => sum + (cpu.user + cpu.system) / 1e6, 0);
}

async function syncAndWait(
  coordinator: BenchCoordinator,
  redis: Redis,
  hosts: readonly BenchChild[],
  workers: number,
  version: number,
  body: Record<string, unknown>,
): Promise<SyncRun> {
  const acksKey = fleetKeys(coordinator.prefix).acks(COMPONENT, version);
  const hostCpuBefore = await hostsCpuS(hosts);
  const cpuBefore = process.cpuUsage();
  const wallStart = Date.now();
  const started = performance.now();
  const response = await coordinator.api(`/v1/weights/${COMPONENT}/sync`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ version, ...body }),
  });
  if (response.status !== 202) {
    throw new Error(`sync: ${response.status} ${(await response.text()).slice(0, 500)}`);
  }
  while ((await redis.hlen(acksKey)) < workers) {
    if (performance.now() - started > ACK_TIMEOUT_MS) throw new Error(`v${version} timed out`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const ms = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const hostCpuS = (await hostsCpuS(hosts)) - hostCpuBefore;
  const acks = Object.values(await redis.hgetall(acksKey)).map((text) =>
    SyncAckSchema.parse(JSON.parse(text)),
  );
  for (const ack of acks) {
    if (ack.status !== 'ok') {
      throw new Error(`${ack.workerId} acked ${ack.status}: ${ack.reason?.slice(0, 500)}`);
    }
  }
  return { ms, acks, wallStart, hostCpuS, coordinatorCpuS: (cpu.user + cpu.system) / 1e6 };
}

function summarise(
  mode: Mode,
  workers: number,
  payload: Payload,
  rate: number,
  run: SyncRun,
): Measured {
  const sources = run.acks.map((ack) => ack.sources ?? {});
  const fromCoordinator = sources.reduce((sum, s) => sum + (s['coordinator'] ?? 0), 0);
  const all = sources.reduce((sum, s) => sum + Object.values(s).reduce((a, b) => a + b, 0), 0);
  const ackMs = run.acks.map((ack) => Date.parse(ack.at) - run.wallStart).sort((a, b) => a - b);
  return {
    mode,
    workers,
    payload,
    rate,
    ms: run.ms,
    fetchedBytes: run.acks[0]?.fetchedBytes ?? 0,
    fromCoordinator,
    fromPeers: all - fromCoordinator,
    fallbacks: run.acks.reduce((sum, ack) => sum + (ack.fallbackCount ?? 0), 0),
    ackP50Ms: ackMs[Math.floor(ackMs.length / 2)] ?? 0,
    workerCpuS: run.hostCpuS / workers,
    coordinatorCpuS: run.coordinatorCpuS,
  };
}

/**
 * Builds the payloads and uploads them once to the shared blob dir (every fleet's coordinator
 * reads it); the ~560 MB in memory are dropped when this returns.
 */
async function uploadPayloads(redisUrl: string, blobDir: string) {
  const payloads: SyncPayloads = buildSyncPayloads();
  const uploader = await startBenchCoordinator(redisUrl, benchPrefix('sync-up'), blobDir);
  try {
    return {
      sizes: {
        full: payloads.full.byteLength,
        delta: payloads.deltaChangedBytes,
        lora: payloads.lora.byteLength,
      },
      blobs: {
        full: await upload(uploader, payloads.full),
        delta: await upload(uploader, payloads.delta),
        lora: await upload(uploader, payloads.lora),
      },
      loraConfig: payloads.loraConfig,
      loraLayers: payloads.loraLayers,
    };
  } finally {
    await uploader.close();
  }
}

/**
 * Starts `workers` bench workers spread over min(HOSTS, workers) host processes
 * (bench/lib/sync-worker-host.ts) and resolves once every one has started; on a failure all are
 * stopped.
 */
async function startHosts(
  redisUrl: string,
  coordinator: BenchCoordinator,
  mode: Mode,
  workers: number,
  rate: number,
): Promise<BenchChild[]> {
  const count = Math.min(HOSTS, workers);
  const hosts: BenchChild[] = [];
  let first = 1;
  for (let h = 0; h < count; h++) {
    const here = Math.floor(workers / count) + (h < workers % count ? 1 : 0);
    hosts.push(
      spawnTsx(`sync-host-${h + 1}`, 'bench/lib/sync-worker-host.ts', {
        env: {
          REDIS_URL: redisUrl,
          FLOWFLEET_COORDINATOR_URL: coordinator.url,
          FLOWFLEET_PREFIX: coordinator.prefix,
          FLOWFLEET_WORKER_TOKEN: BENCH_TOKENS.worker,
          BENCH_SYNC_FIRST: String(first),
          BENCH_SYNC_COUNT: String(here),
          BENCH_SYNC_PEER: mode === 'fanout' ? '1' : '0',
          BENCH_SYNC_RATE: String(rate),
        },
        ...(CPU_PROF_DIR === undefined
          ? {}
          : { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`] }),
      }),
    );
    first += here;
  }
  try {
    await Promise.all(
      hosts.map(
        (host) =>
          new Promise<void>((resolve, reject) => {
            const timer = setTimeout(
              () => reject(new Error(`${host.name} did not start in time:\n${host.output()}`)),
              HOST_START_TIMEOUT_MS,
            );
            host.process.once('message', () => {
              clearTimeout(timer);
              resolve();
            });
            void host.exited.then(() => {
              clearTimeout(timer);
              reject(new Error(`${host.name} exited at start:\n${host.output()}`));
            });
          }),
      ),
    );
  } catch (error) {
    await stopProcesses(hosts);
    throw error;
  }
  return hosts;
}

/** What one fleet syncs: the blobs, the adapter's config, and whether only the full checkpoint. */
interface FleetPlan {
  readonly blobs: { full: string; delta: string; lora: string };
  readonly lora: { config: Record<string, unknown>; layers: number };
  readonly fullOnly: boolean;
}

/**
 * One (mode, N, cap): a fresh coordinator and workers, then full → delta → LoRA on the delta (or
 * the full checkpoint alone).
 */
async function measureFleet(
  redisUrl: string,
  redis: Redis,
  blobDir: string,
  plan: FleetPlan,
  mode: Mode,
  workers: number,
  rate: number,
): Promise<Measured[]> {
  const { blobs, lora } = plan;
  const coordinator = await startBenchCoordinator(
    redisUrl,
    benchPrefix(`sync-${mode}${workers}`),
    blobDir,
    undefined,
    createCardRegistry([SYNC_CARD]),
    rate,
  );
  const hosts = await startHosts(redisUrl, coordinator, mode, workers, rate).catch(
    async (error: unknown) => {
      await coordinator.close();
      throw error;
    },
  );
  const rows: Measured[] = [];
  const measure = async (payload: Payload, version: number, body: Record<string, unknown>) => {
    const run = await syncAndWait(coordinator, redis, hosts, workers, version, body);
    const row = summarise(mode, workers, payload, rate, run);
    console.log(
      `${mode} n${workers} ${payload} at ${rate / 1e6} MB/s: ${round(row.ms, 0)} ms, ` +
        `${round(row.workerCpuS, 2)} CPU-s per worker (peers ${round(row.fromPeers / 1e6, 1)} MB, ` +
        `coordinator ${round(row.fromCoordinator / 1e6, 1)} MB, fallbacks ${row.fallbacks})`,
    );
    rows.push(row);
  };
  try {
    await measure('full', 1, { sha256: blobs.full });
    if (plan.fullOnly) return rows;
    await measure('delta', 2, { sha256: blobs.delta });
    if (workers <= LORA_MAX_N) {
      await measure('lora', 3, {
        sha256: blobs.lora,
        lora: { base: 2, config: lora.config, expectLayers: lora.layers },
      });
    }
    return rows;
  } finally {
    await stopProcesses(hosts);
    await coordinator.close();
  }
}

/**
 * The cap at which `workers` fan-out hosts need at most CPU_BUDGET_CORES: each moves the payload
 * in about bytes / rate seconds and spent `cpuS` doing so in the grid, so rate ≤
 * cores · bytes / (workers · cpuS); rounded down to 0.5 MB/s, at least 2 MB/s (a longer run), at
 * most RATE.
 */
function linkBoundRate(bytes: number, workers: number, cpuS: number): number {
  const rate = (CPU_BUDGET_CORES * bytes) / (workers * cpuS);
  return Math.min(RATE, Math.max(2e6, Math.floor(rate / 5e5) * 5e5));
}

/** How the link-bound cap was chosen (for the results). */
let linkRateWhy: string | undefined;

await runBench(async (teardown) => {
  const redisServer = await startBenchRedis();
  teardown.add('redis-server', () => redisServer.stop());
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
  teardown.add('redis connection', async () => redis.disconnect());
  const blobDir = mkdtempSync(join(tmpdir(), 'ff-sync-blobs-'));
  teardown.add('blob dir', async () => rmSync(blobDir, { recursive: true, force: true }));

  const started = performance.now();
  const loadAvgStart = loadavg()[0]!;
  const { sizes, blobs, loraConfig, loraLayers } = await uploadPayloads(redisServer.url, blobDir);
  console.log(
    `egress cap ${RATE / 1e6} MB/s per process; full ${round(sizes.full / 1e6, 1)} MB, ` +
      `delta ${round(sizes.delta / 1e6, 1)} MB changed, LoRA ${round(sizes.lora / 1e6, 1)} MB ` +
      `(${loraLayers} layers, rank 32); fleets of ${FLEET_SIZES.join(', ')} over up to ${HOSTS} ` +
      `host processes; ${round(freemem() / 2 ** 30, 1)} GiB free; load ${round(loadAvgStart, 2)}`,
  );
  const plan = { blobs, lora: { config: loraConfig, layers: loraLayers } };
  const context: ReportContext = { sizes, loraLayers, loadAvgStart, started };

  const rows: Measured[] = [];
  for (const workers of FLEET_SIZES) {
    for (const mode of MODES) {
      rows.push(
        ...(await measureFleet(
          redisServer.url,
          redis,
          blobDir,
          { ...plan, fullOnly: false },
          mode,
          workers,
          RATE,
        )),
      );
    }
    // Written after every fleet size, so a long run leaves its figures so far.
    report(rows, context);
  }
  // The link-bound point: the full checkpoint again at the cap where the largest fan-out fleet's
  // measured CPU fits the budget — there the shared cores do not stand in for the network.
  const largest = Math.max(...FLEET_SIZES);
  const gridFanout = rows.find(
    (r) => r.mode === 'fanout' && r.workers === largest && r.payload === 'full',
  );
  if (LINK_WORKERS.length === 0 || gridFanout === undefined) return;
  const linkRate =
    LINK_RATE ?? linkBoundRate(sizes.full, Math.max(...LINK_WORKERS), gridFanout.workerCpuS);
  linkRateWhy =
    (LINK_RATE === undefined ? '' : `BENCH_SYNC_LINK_RATE; the rule would say: `) +
    `${largest} fan-out workers spent ${round(gridFanout.workerCpuS, 3)} CPU-s each on ` +
    `${round(sizes.full / 1e6, 1)} MB in the grid at ${RATE / 1e6} MB/s; ` +
    `${CPU_BUDGET_CORES} cores · bytes / (${Math.max(...LINK_WORKERS)} · CPU-s) = ` +
    `${round((CPU_BUDGET_CORES * sizes.full) / (Math.max(...LINK_WORKERS) * gridFanout.workerCpuS) / 1e6, 2)} MB/s`;
  console.log(`link-bound cap ${linkRate / 1e6} MB/s (${linkRateWhy})`);
  const linkFleets: [Mode, number][] = [
    ['star', 1],
    ...LINK_WORKERS.map((n): [Mode, number] => ['fanout', n]),
  ];
  for (const [mode, workers] of linkFleets) {
    rows.push(
      ...(await measureFleet(
        redisServer.url,
        redis,
        blobDir,
        { ...plan, fullOnly: true },
        mode,
        workers,
        linkRate,
      )),
    );
    report(rows, context, linkRate);
  }
});

/** What the report needs besides the rows. */
interface ReportContext {
  readonly sizes: Record<Payload, number>;
  readonly loraLayers: number;
  readonly loadAvgStart: number;
  /** performance.now() at the start of the run. */
  readonly started: number;
}

/** Prints the table and writes bench/results/sync.json from the rows measured so far. */
function report(rows: readonly Measured[], context: ReportContext, linkRate?: number): void {
  const { sizes, loraLayers } = context;
  const find = (rate: number, mode: Mode, workers: number, payload: Payload) =>
    rows.find(
      (r) => r.rate === rate && r.mode === mode && r.workers === workers && r.payload === payload,
    );
  const baseline = (rate: number, payload: Payload): number =>
    find(rate, 'star', 1, payload)?.ms ?? Number.NaN;
  const floorMs = (rate: number, payload: Payload): number => (sizes[payload] / rate) * 1000;
  const table = rows.map((row) => ({
    payload: row.payload,
    'cap MB/s': row.rate / 1e6,
    workers: row.workers,
    mode: row.mode,
    'ms to every ack': round(row.ms, 0),
    'ratio to 1 worker': round(row.ms / baseline(row.rate, row.payload), 2),
    'floor ms (bytes/cap)': round(floorMs(row.rate, row.payload), 0),
    'MB from coordinator': round(row.fromCoordinator / 1e6, 1),
    'MB from peers': round(row.fromPeers / 1e6, 1),
    fallbacks: row.fallbacks,
    'ack p50 ms': round(row.ackP50Ms, 0),
    'CPU s per worker': round(row.workerCpuS, 2),
    // The cores the workers used while the sync ran: N · CPU per worker / time.
    'worker cores busy': round((row.workers * row.workerCpuS) / (row.ms / 1000), 2),
    'coordinator CPU s': round(row.coordinatorCpuS, 2),
  }));
  printTable(table);
  const ratios = (rate: number, payload: Payload, mode: Mode, sizes: readonly number[]) =>
    Object.fromEntries(
      sizes.flatMap((n) => {
        const row = find(rate, mode, n, payload);
        return row === undefined ? [] : [[`n${n}`, round(row.ms / baseline(rate, payload), 3)]];
      }),
    );
  const cpu = (rate: number, payload: Payload, mode: Mode, sizes: readonly number[]) =>
    Object.fromEntries(
      sizes.flatMap((n) => {
        const row = find(rate, mode, n, payload);
        return row === undefined ? [] : [[`n${n}`, round(row.workerCpuS, 3)]];
      }),
    );
  const grid = {
    egressBytesPerSecond: RATE,
    peerFanoutRatio: ratios(RATE, 'full', 'fanout', FLEET_SIZES),
    starRatio: ratios(RATE, 'full', 'star', FLEET_SIZES),
    loraFanoutRatio: ratios(RATE, 'lora', 'fanout', FLEET_SIZES),
    loraStarRatio: ratios(RATE, 'lora', 'star', FLEET_SIZES),
    deltaFanoutRatio: ratios(RATE, 'delta', 'fanout', FLEET_SIZES),
    deltaStarRatio: ratios(RATE, 'delta', 'star', FLEET_SIZES),
    baselineMs: Object.fromEntries(PAYLOADS.map((p) => [p, round(baseline(RATE, p), 1)])),
    floorMs: Object.fromEntries(PAYLOADS.map((p) => [p, round(floorMs(RATE, p), 1)])),
    workerCpuSecondsPerSync: Object.fromEntries(
      PAYLOADS.flatMap((payload) =>
        MODES.map((mode) => [`${payload}-${mode}`, cpu(RATE, payload, mode, FLEET_SIZES)]),
      ),
    ),
  };
  const linkBound =
    linkRate === undefined
      ? undefined
      : {
          egressBytesPerSecond: linkRate,
          peerFanoutRatio: ratios(linkRate, 'full', 'fanout', LINK_WORKERS),
          baselineMs: round(baseline(linkRate, 'full'), 1),
          floorMs: round(floorMs(linkRate, 'full'), 1),
          workerCpuSecondsPerSync: {
            'full-star': cpu(linkRate, 'full', 'star', [1]),
            'full-fanout': cpu(linkRate, 'full', 'fanout', LINK_WORKERS),
          },
        };
  const file = writeResults('sync', {
    figures: {
      // The issue's figure: fan-out to N ÷ one worker, the same bytes under the same cap — at the
      // link-bound cap once measured (there the link, not the shared CPU, is the bottleneck).
      peerFanoutRatio: { ...grid.peerFanoutRatio, ...linkBound?.peerFanoutRatio },
      peerFanoutRatioFrom:
        linkBound === undefined
          ? `the grid at ${RATE / 1e6} MB/s`
          : `n1: the grid at ${RATE / 1e6} MB/s; ${LINK_WORKERS.map((n) => `n${n}`).join(', ')}: the link-bound cap ${linkRate! / 1e6} MB/s`,
      grid,
      ...(linkBound === undefined ? {} : { linkBound }),
    },
    setup: {
      egressBytesPerSecond: RATE,
      linkBoundBytesPerSecond: linkRate ?? null,
      linkBoundRule: linkRateWhy ?? null,
      cpuBudgetCores: CPU_BUDGET_CORES,
      egress:
        'one token bucket per process role: the coordinator blob route, and each worker peer server (its own bucket)',
      fleetSizes: FLEET_SIZES,
      linkBoundFleetSizes: LINK_WORKERS,
      loraMaxWorkers: LORA_MAX_N,
      payloadBytes: sizes,
      config: { dim: SYNC_CONFIG.dim, ffnDim: SYNC_CONFIG.ffnDim, layers: SYNC_CONFIG.layers },
      loraRank: 32,
      loraLayers,
      order:
        'grid, per fleet: full (v1), delta of it (v2), LoRA on v2 (v3); then the link-bound fleets: full only',
      baseline: 'star with one worker (the same bytes under the same cap), in the same run',
      process: `redis-server, the coordinator (this process) and the workers in up to ${HOSTS} host processes (bench/lib/sync-worker-host.ts) on this machine's 2 cores (loadAvg1mStart: what else was running)`,
      loadAvg1mStart: round(context.loadAvgStart, 2),
      loadAvg1mNow: round(loadavg()[0]!, 2),
      wallSecondsSoFar: round((performance.now() - context.started) / 1000, 0),
    },
    rows: table,
  });
  console.log(`wrote ${file}`);
}
