// bench:sync — weight-sync propagation of a ~16 MiB dit blob to N = 1, 8, 32 in-process workers
// (each subscribed to the sync channel, cpu backend, serving a no-op card whose dit config makes
// the blob that size), against the baseline of fetching the same blob once over HTTP from the
// coordinator and hashing it (sha256) in this process, measured right before every sync.
// Propagation: from just before POST /v1/weights/dit/sync until every worker's ack is in the
// acks hash (polled every 2 ms); each worker's own ack time comes from its ack's `at`. Every N
// gets a fresh coordinator prefix (versions restart at 1) and `BENCH_SYNC_REPS` syncs. A second
// baseline, N concurrent fetch+hash in this process, is what the in-process fleet's downloads
// cost without the sync machinery. Prints a table and writes bench/results/sync.json.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWan21Config, encodeWeights, initWeights, parameterShapes } from '@flowfleet/models';
import { FlowfleetClient } from '@flowfleet/client';
import { fleetKeys, SyncAckSchema } from '@flowfleet/protocol';
import { verifyWeightsBlob } from '@flowfleet/worker';
import { Redis } from 'ioredis';
import { percentile, printTable, round, writeResults } from './lib/bench-report.js';
import {
  BENCH_TOKENS,
  benchPrefix,
  closeWorkers,
  startBenchCoordinator,
  startBenchWorkers,
  type BenchCoordinator,
} from './lib/bench-fleet.js';
import { noopCard } from './lib/noop-card.js';
import { startBenchRedis } from './lib/redis-server.js';
import { runBench } from './lib/teardown.js';

const FLEET_SIZES = (process.env['BENCH_SYNC_WORKERS'] ?? '1,8,32').split(',').map(Number);
const REPS = Number(process.env['BENCH_SYNC_REPS'] ?? 3);
const COMPONENT = 'dit';
const ACK_TIMEOUT_MS = 120_000;
const BASELINE_SAMPLES = 3;
// dim 256, ffn 768, 4 layers: a 16.3 MiB float32 dit (the wan21-mini dit is 2.6 MiB).
const CONFIG = createWan21Config({ dim: 256, ffnDim: 768, heads: 4, layers: 4 });
const card = noopCard({ id: 'bench-sync-16m', config: CONFIG });

interface Blob {
  readonly bytes: Uint8Array;
  readonly sha256: string;
}

interface Rep {
  /** Median of BASELINE_SAMPLES fetch + sha256 of the blob. */
  readonly fetchAndHashMs: number;
  /** sha256 alone of the blob in memory. */
  readonly hashMs: number;
  readonly fetchAndVerifyMs: number;
  readonly propagationMs: number;
  /** Per worker: from the sync call to its ack's `at` (ms resolution). */
  readonly ackMs: number[];
}

const median = (values: readonly number[]): number => percentile(values, 50);

/** One SDK client per coordinator: the transport a worker downloads with (undici). */
const clients = new WeakMap<BenchCoordinator, FlowfleetClient>();

/** GET the blob as a worker does (the SDK's getBlobBytes, unchecked; the caller hashes). */
function fetchBlob(coordinator: BenchCoordinator, sha256: string): Promise<Uint8Array> {
  let client = clients.get(coordinator);
  if (client === undefined) {
    client = FlowfleetClient.create({ baseUrl: coordinator.url, token: BENCH_TOKENS.worker });
    clients.set(coordinator, client);
  }
  return client.getBlobBytes(sha256);
}

/** The baseline: GET the blob from the coordinator as a worker does, and sha256 it. */
async function fetchAndHash(coordinator: BenchCoordinator, sha256: string): Promise<void> {
  const bytes = await fetchBlob(coordinator, sha256);
  if (createHash('sha256').update(bytes).digest('hex') !== sha256) {
    throw new Error('baseline fetch: sha256 mismatch');
  }
}

async function upload(coordinator: BenchCoordinator, blob: Blob): Promise<void> {
  const response = await coordinator.api('/v1/blobs', {
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream' },
    body: blob.bytes,
  });
  if (response.status !== 201) throw new Error(`PUT blob: ${response.status}`);
}

async function syncOnce(
  coordinator: BenchCoordinator,
  redis: Redis,
  workers: number,
  version: number,
  blob: Blob,
): Promise<Rep> {
  // The baseline first, with the same workers idle in this process.
  const samples: number[] = [];
  let started: number;
  for (let i = 0; i < BASELINE_SAMPLES; i++) {
    started = performance.now();
    await fetchAndHash(coordinator, blob.sha256);
    samples.push(performance.now() - started);
  }
  started = performance.now();
  createHash('sha256').update(blob.bytes).digest('hex');
  const hashMs = performance.now() - started;
  started = performance.now();
  const expected = { component: COMPONENT, version, sha256: blob.sha256 };
  verifyWeightsBlob(
    await fetchBlob(coordinator, blob.sha256),
    { ...expected, sizeBytes: blob.bytes.byteLength },
    parameterShapes(CONFIG),
  );
  const fetchAndVerifyMs = performance.now() - started;

  const acks = fleetKeys(coordinator.prefix).acks(COMPONENT, version);
  const wallStart = Date.now();
  started = performance.now();
  const response = await coordinator.api(`/v1/weights/${COMPONENT}/sync`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ version, sha256: blob.sha256 }),
  });
  if (response.status !== 202) throw new Error(`sync: ${response.status} ${await response.text()}`);
  while ((await redis.hlen(acks)) < workers) {
    if (performance.now() - started > ACK_TIMEOUT_MS)
      throw new Error(`acks of v${version} timed out`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  const propagationMs = performance.now() - started;
  const ackMs = Object.values(await redis.hgetall(acks)).map((text) => {
    const ack = SyncAckSchema.parse(JSON.parse(text));
    if (ack.status !== 'ok') throw new Error(`${ack.workerId} acked ${ack.status}: ${ack.reason}`);
    return Date.parse(ack.at) - wallStart;
  });
  return { fetchAndHashMs: median(samples), hashMs, fetchAndVerifyMs, propagationMs, ackMs };
}

await runBench(async (teardown) => {
  const redisServer = await startBenchRedis();
  teardown.add('redis-server', () => redisServer.stop());
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
  teardown.add('redis connection', async () => redis.disconnect());
  const blobDir = mkdtempSync(join(tmpdir(), 'ff-sync-blobs-'));
  teardown.add('blob dir', async () => rmSync(blobDir, { recursive: true, force: true }));
  const blobs: Blob[] = Array.from({ length: REPS }, (_, i) => {
    const bytes = encodeWeights(initWeights(CONFIG, 1000 + i, 'dit'));
    return { bytes, sha256: createHash('sha256').update(bytes).digest('hex') };
  });
  const sizeMiB = blobs[0]!.bytes.byteLength / 2 ** 20;
  console.log(
    `redis-server ${redisServer.version}; dit blob ${round(sizeMiB, 2)} MiB; ` +
      `fleets of ${FLEET_SIZES.join(', ')} in-process workers; ${REPS} syncs each`,
  );

  const rows: { workers: number; reps: Rep[]; parallelFetchAndHashMs: number }[] = [];
  for (const workers of FLEET_SIZES) {
    const coordinator = await startBenchCoordinator(
      redisServer.url,
      benchPrefix(`sync${workers}`),
      blobDir,
    );
    teardown.add(`coordinator (${workers})`, () => coordinator.close());
    const fleet = await startBenchWorkers(workers, {
      redisUrl: redisServer.url,
      coordinator,
      card,
      concurrency: 1,
    });
    teardown.add(`workers (${workers})`, () => closeWorkers(fleet));
    for (const blob of blobs) await upload(coordinator, blob);
    // What N workers' downloads and hashes cost in this one process, without the sync machinery.
    const parallelStart = performance.now();
    await Promise.all(
      Array.from({ length: workers }, () => fetchAndHash(coordinator, blobs[0]!.sha256)),
    );
    const parallelFetchAndHashMs = performance.now() - parallelStart;
    const reps: Rep[] = [];
    for (const [i, blob] of blobs.entries()) {
      reps.push(await syncOnce(coordinator, redis, workers, i + 1, blob));
    }
    rows.push({ workers, reps, parallelFetchAndHashMs });
    await closeWorkers(fleet);
    await clients.get(coordinator)?.close();
    await coordinator.close();
  }

  const summary = rows.map(({ workers, reps, parallelFetchAndHashMs }) => {
    const baseline = median(reps.map((r) => r.fetchAndHashMs));
    const propagation = median(reps.map((r) => r.propagationMs));
    const acks = reps.flatMap((r) => r.ackMs);
    return {
      workers,
      propagationMs: propagation,
      propagationRunsMs: reps.map((r) => round(r.propagationMs, 1)),
      fetchAndHashMs: baseline,
      hashMs: median(reps.map((r) => r.hashMs)),
      fetchAndVerifyMs: median(reps.map((r) => r.fetchAndVerifyMs)),
      ratio: propagation / baseline,
      parallelFetchAndHashMs,
      ratioToParallel: propagation / parallelFetchAndHashMs,
      ackP50Ms: median(acks),
      ackMaxMs: Math.max(...acks),
    };
  });
  printTable(
    summary.map((row) => ({
      workers: row.workers,
      'propagation ms (p50)': round(row.propagationMs, 1),
      'fetch+hash ms': round(row.fetchAndHashMs, 1),
      ratio: round(row.ratio, 2),
      'hash ms': round(row.hashMs, 1),
      'fetch+verify ms': round(row.fetchAndVerifyMs, 1),
      'N× fetch+hash ms': round(row.parallelFetchAndHashMs, 1),
      'ratio to N×': round(row.ratioToParallel, 2),
      'per-worker ack p50 ms': round(row.ackP50Ms, 0),
      'ack max ms': round(row.ackMaxMs, 0),
      'propagation per worker ms': round(row.propagationMs / row.workers, 1),
    })),
  );
  const byN = (pick: (row: (typeof summary)[number]) => number, digits = 1) =>
    Object.fromEntries(summary.map((row) => [`n${row.workers}`, round(pick(row), digits)]));
  const file = writeResults('sync', {
    figures: {
      propagationMs: byN((row) => row.propagationMs),
      fetchAndHashMs: round(
        median(rows.flatMap((r) => r.reps.map((rep) => rep.fetchAndHashMs))),
        1,
      ),
      fetchAndVerifyMs: round(
        median(rows.flatMap((r) => r.reps.map((rep) => rep.fetchAndVerifyMs))),
        1,
      ),
      ratioToFetchAndHash: byN((row) => row.ratio, 2),
      parallelFetchAndHashMs: byN((row) => row.parallelFetchAndHashMs),
      ratioToParallelFetchAndHash: byN((row) => row.ratioToParallel, 2),
      hashMs: round(median(rows.flatMap((r) => r.reps.map((rep) => rep.hashMs))), 1),
      perWorkerAckP50Ms: byN((row) => row.ackP50Ms, 0),
      ackMaxMs: byN((row) => row.ackMaxMs, 0),
      blobMiB: round(sizeMiB, 2),
    },
    setup: {
      fleetSizes: FLEET_SIZES,
      syncsPerFleet: REPS,
      blobBytes: blobs[0]!.bytes.byteLength,
      config: { dim: CONFIG.dim, ffnDim: CONFIG.ffnDim, layers: CONFIG.layers },
      process:
        'redis-server in its own process; coordinator, all workers and the baseline in this one',
    },
    fleets: summary.map((row) =>
      Object.fromEntries(
        Object.entries(row).map(([k, v]) => [k, typeof v === 'number' ? round(v, 2) : v]),
      ),
    ),
  });
  console.log(`wrote ${file}`);
});
