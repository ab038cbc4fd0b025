// bench:sync — weight-sync propagation under a per-process egress cap (a token bucket, the same
// one the coordinator's blob route and every worker's peer server pay into), so the
// coordinator's link is the bottleneck as on a real network. For N = 1, 8, 32 in-process workers
// (real workers serving a no-op card sized to the payloads: bench/lib/sync-payloads.ts) and
// three payloads — a 258 MB float32 checkpoint, a ~3 % delta of it, a 42.5 MB rank-32 LoRA
// adapter on every q/k/v/o — it measures sync-until-every-ack twice in one run: star (peer
// servers off: every worker fetches from the coordinator) and peer fan-out (the coordinator's
// pipelined chain). Time: from just before POST /v1/weights/dit/sync until every worker's ack is
// in the acks hash (polled every 5 ms), each ack `ok`. Baseline: star with N = 1 — one worker
// receiving the same bytes under the same cap — measured in the same run; the floor bytes/rate
// is printed beside it. Every (mode, N) gets a fresh coordinator prefix and fresh workers. Prints
// a table and writes bench/results/sync.json (peerFanoutRatio.n32 = fan-out N = 32 ÷ star N = 1,
// full checkpoint). Env: BENCH_SYNC_RATE (bytes/s, default 25e6), BENCH_SYNC_WORKERS (1,8,32).
import { mkdtempSync, rmSync } from 'node:fs';
import { freemem, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCardRegistry } from '@flowfleet/models';
import { fleetKeys, SyncAckSchema, type SyncAck } from '@flowfleet/protocol';
import { Redis } from 'ioredis';
import { printTable, round, writeResults } from './lib/bench-report.js';
import {
  benchPrefix,
  closeWorkers,
  startBenchCoordinator,
  startBenchWorkers,
  type BenchCoordinator,
} from './lib/bench-fleet.js';
import { startBenchRedis } from './lib/redis-server.js';
import {
  buildSyncPayloads,
  SYNC_CARD,
  SYNC_CONFIG,
  type SyncPayloads,
} from './lib/sync-payloads.js';
import { runBench } from './lib/teardown.js';

const RATE = Number(process.env['BENCH_SYNC_RATE'] ?? 50e6);
const FLEET_SIZES = (process.env['BENCH_SYNC_WORKERS'] ?? '1,32,8').split(',').map(Number);
/**
 * LoRA syncs are measured up to this many workers: 32 in-process workers merging 864 layers each
 * on two shared cores is a CPU benchmark, not a network one (BENCH_SYNC_LORA_MAX_N).
 */
const LORA_MAX_N = Number(process.env['BENCH_SYNC_LORA_MAX_N'] ?? 8);
const MODES = ['star', 'fanout'] as const;
const PAYLOADS = ['full', 'delta', 'lora'] as const;
const ACK_TIMEOUT_MS = 900_000;
const COMPONENT = 'dit';

type Mode = (typeof MODES)[number];
type Payload = (typeof PAYLOADS)[number];

interface Measured {
  readonly mode: Mode;
  readonly workers: number;
  readonly payload: Payload;
  readonly ms: number;
  /** Bytes each worker fetched (from its acks; the same for all). */
  readonly fetchedBytes: number;
  /** Bytes all workers took from the coordinator / from peers. */
  readonly fromCoordinator: number;
  readonly fromPeers: number;
  readonly fallbacks: number;
  readonly ackP50Ms: number;
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

async function syncAndWait(
  coordinator: BenchCoordinator,
  redis: Redis,
  workers: number,
  version: number,
  body: Record<string, unknown>,
): Promise<{ ms: number; acks: SyncAck[]; wallStart: number }> {
  const acksKey = fleetKeys(coordinator.prefix).acks(COMPONENT, version);
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
  const acks = Object.values(await redis.hgetall(acksKey)).map((text) =>
    SyncAckSchema.parse(JSON.parse(text)),
  );
  for (const ack of acks) {
    if (ack.status !== 'ok') {
      throw new Error(`${ack.workerId} acked ${ack.status}: ${ack.reason?.slice(0, 500)}`);
    }
  }
  return { ms, acks, wallStart };
}

function summarise(
  mode: Mode,
  workers: number,
  payload: Payload,
  run: { ms: number; acks: SyncAck[]; wallStart: number },
): Measured {
  const sources = run.acks.map((ack) => ack.sources ?? {});
  const fromCoordinator = sources.reduce((sum, s) => sum + (s['coordinator'] ?? 0), 0);
  const all = sources.reduce((sum, s) => sum + Object.values(s).reduce((a, b) => a + b, 0), 0);
  const ackMs = run.acks.map((ack) => Date.parse(ack.at) - run.wallStart).sort((a, b) => a - b);
  return {
    mode,
    workers,
    payload,
    ms: run.ms,
    fetchedBytes: run.acks[0]?.fetchedBytes ?? 0,
    fromCoordinator,
    fromPeers: all - fromCoordinator,
    fallbacks: run.acks.reduce((sum, ack) => sum + (ack.fallbackCount ?? 0), 0),
    ackP50Ms: ackMs[Math.floor(ackMs.length / 2)] ?? 0,
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

/** One (mode, N): a fresh coordinator and workers, then full → delta → LoRA on the delta. */
async function measureFleet(
  redisUrl: string,
  redis: Redis,
  blobDir: string,
  blobs: { full: string; delta: string; lora: string },
  lora: { config: Record<string, unknown>; layers: number },
  mode: Mode,
  workers: number,
): Promise<Measured[]> {
  const coordinator = await startBenchCoordinator(
    redisUrl,
    benchPrefix(`sync-${mode}${workers}`),
    blobDir,
    undefined,
    createCardRegistry([SYNC_CARD]),
    RATE,
  );
  const fleet = await startBenchWorkers(workers, {
    redisUrl,
    coordinator,
    card: SYNC_CARD,
    concurrency: 1,
    peer: mode === 'fanout' ? { host: '127.0.0.1', port: 0 } : false,
    egressBytesPerSecond: RATE,
  }).catch(async (error: unknown) => {
    await coordinator.close();
    throw error;
  });
  try {
    const full = await syncAndWait(coordinator, redis, workers, 1, { sha256: blobs.full });
    const delta = await syncAndWait(coordinator, redis, workers, 2, { sha256: blobs.delta });
    const rows = [summarise(mode, workers, 'full', full), summarise(mode, workers, 'delta', delta)];
    if (workers <= LORA_MAX_N) {
      const adapter = await syncAndWait(coordinator, redis, workers, 3, {
        sha256: blobs.lora,
        lora: { base: 2, config: lora.config, expectLayers: lora.layers },
      });
      rows.push(summarise(mode, workers, 'lora', adapter));
    }
    for (const row of rows) {
      console.log(
        `${mode} n${workers} ${row.payload}: ${round(row.ms, 0)} ms (peers ${round(row.fromPeers / 1e6, 1)} MB, coordinator ${round(row.fromCoordinator / 1e6, 1)} MB, fallbacks ${row.fallbacks})`,
      );
    }
    return rows;
  } finally {
    await closeWorkers(fleet);
    await coordinator.close();
  }
}

await runBench(async (teardown) => {
  const redisServer = await startBenchRedis();
  teardown.add('redis-server', () => redisServer.stop());
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
  teardown.add('redis connection', async () => redis.disconnect());
  const blobDir = mkdtempSync(join(tmpdir(), 'ff-sync-blobs-'));
  teardown.add('blob dir', async () => rmSync(blobDir, { recursive: true, force: true }));

  const { sizes, blobs, loraConfig, loraLayers } = await uploadPayloads(redisServer.url, blobDir);
  console.log(
    `egress cap ${RATE / 1e6} MB/s per process; full ${round(sizes.full / 1e6, 1)} MB, ` +
      `delta ${round(sizes.delta / 1e6, 1)} MB changed, LoRA ${round(sizes.lora / 1e6, 1)} MB ` +
      `(${loraLayers} layers, rank 32); fleets of ${FLEET_SIZES.join(', ')}; ` +
      `${round(freemem() / 2 ** 30, 1)} GiB free`,
  );

  const rows: Measured[] = [];
  for (const workers of FLEET_SIZES) {
    for (const mode of MODES) {
      rows.push(
        ...(await measureFleet(
          redisServer.url,
          redis,
          blobDir,
          blobs,
          { config: loraConfig, layers: loraLayers },
          mode,
          workers,
        )),
      );
    }
    // Written after every fleet size, so a long run leaves its figures so far.
    report(rows, sizes, loraLayers);
  }
});

/** Prints the table and writes bench/results/sync.json from the rows measured so far. */
function report(
  rows: readonly Measured[],
  sizes: Record<Payload, number>,
  loraLayers: number,
): void {
  const find = (mode: Mode, workers: number, payload: Payload): Measured | undefined =>
    rows.find((r) => r.mode === mode && r.workers === workers && r.payload === payload);
  const baseline = (payload: Payload): number => find('star', 1, payload)?.ms ?? Number.NaN;
  const table = rows.map((row) => ({
    payload: row.payload,
    workers: row.workers,
    mode: row.mode,
    'ms to every ack': round(row.ms, 0),
    'ratio to 1 worker': round(row.ms / baseline(row.payload), 2),
    'floor ms (bytes/rate)': round((sizes[row.payload] / RATE) * 1000, 0),
    'MB from coordinator': round(row.fromCoordinator / 1e6, 1),
    'MB from peers': round(row.fromPeers / 1e6, 1),
    fallbacks: row.fallbacks,
    'ack p50 ms': round(row.ackP50Ms, 0),
  }));
  printTable(table);
  const ratios = (payload: Payload, mode: Mode) =>
    Object.fromEntries(
      FLEET_SIZES.flatMap((n) => {
        const row = find(mode, n, payload);
        return row === undefined ? [] : [[`n${n}`, round(row.ms / baseline(payload), 3)]];
      }),
    );
  const file = writeResults('sync', {
    figures: {
      peerFanoutRatio: ratios('full', 'fanout'),
      starRatio: ratios('full', 'star'),
      loraFanoutRatio: ratios('lora', 'fanout'),
      loraStarRatio: ratios('lora', 'star'),
      deltaFanoutRatio: ratios('delta', 'fanout'),
      deltaStarRatio: ratios('delta', 'star'),
      baselineMs: Object.fromEntries(PAYLOADS.map((p) => [p, round(baseline(p), 1)])),
      floorMs: Object.fromEntries(PAYLOADS.map((p) => [p, round((sizes[p] / RATE) * 1000, 1)])),
    },
    setup: {
      egressBytesPerSecond: RATE,
      egress:
        'one token bucket per process role: the coordinator blob route, and each worker peer server (its own bucket)',
      fleetSizes: FLEET_SIZES,
      loraMaxWorkers: LORA_MAX_N,
      payloadBytes: sizes,
      config: { dim: SYNC_CONFIG.dim, ffnDim: SYNC_CONFIG.ffnDim, layers: SYNC_CONFIG.layers },
      loraRank: 32,
      loraLayers,
      order: 'per fleet: full (v1), delta of it (v2), LoRA on v2 (v3)',
      baseline: 'star with one worker (the same bytes under the same cap), in the same run',
      process:
        'redis-server in its own process; the coordinator and all workers in this one (2 shared cores)',
    },
    rows: table,
  });
  console.log(`wrote ${file}`);
}
