// npm run soak -- --minutes M: a long run of a local fleet (redis-server, the coordinator and
// workers as the production processes) with rounds of rollouts fenced to one weight version, a
// new version synced between rounds every few seconds and a worker SIGKILLed (and restarted)
// every K seconds, under short retention settings. Every S
// seconds it samples the RSS of every process, Redis used_memory and key count, and the blob
// store's bytes; once retention has kicked in it fits a slope to each. It reports accepted,
// completed, lost, duplicated and mismatched jobs, prints a table and writes bench/results/soak.json
// (or --out). The baseline is the same run's own steady-state start: flat means slope ≈ 0.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { FlowfleetClient } from '@flowfleet/client';
import { encodeWeights } from '@flowfleet/models';
import { initWeights, wan21MiniCard } from '@flowfleet/models/wan21';
import { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { printTable, round, writeResults } from './lib/bench-report.js';
import { BENCH_TOKENS, benchPrefix } from './lib/bench-fleet.js';
import { spawnTsx, type BenchChild } from './lib/child-process.js';
import { startBenchRedis } from './lib/redis-server.js';
import {
  directoryBytes,
  formatBytes,
  redisFigures,
  rssBytes,
  seriesFigures,
} from './lib/soak-series.js';
import { SoakLedger } from './lib/soak-ledger.js';
import { runBench } from './lib/teardown.js';
import { freePortOf, waitForLive } from './lib/soak-fleet.js';

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    workers: { type: 'string', default: '2' },
    'kill-every': { type: 'string', default: '20' },
    'sample-every': { type: 'string', default: '5' },
    'sync-every': { type: 'string', default: '8' },
    round: { type: 'string', default: '6' },
    retention: { type: 'string', default: '15' },
    'versions-kept': { type: 'string', default: '2' },
    out: { type: 'string' },
  },
});

const MINUTES = Number(args.minutes);
const WORKERS = Math.max(2, Number(args.workers));
const KILL_EVERY_S = Number(args['kill-every']);
const SAMPLE_EVERY_S = Number(args['sample-every']);
const SYNC_EVERY_S = Number(args['sync-every']);
/** Rollouts per round (each round is fenced to one weight version). */
const ROUND = Number(args.round);
/** Job and result retention (s); weight versions kept: 2, grace 5 s, a sweep every 3 s. */
const RETENTION_S = Number(args.retention);
const SWEEP_MS = 3_000;
/** After this, every bound has had time to act: the steady part the slopes are fitted on. */
const STEADY_FROM_S = RETENTION_S + 2 * (SWEEP_MS / 1000) + 10;

await runBench(async (teardown) => {
  const redisServer = await startBenchRedis();
  teardown.add('redis', () => redisServer.stop());
  const prefix = benchPrefix('soak');
  const blobDir = mkdtempSync(join(tmpdir(), 'flowfleet-soak-blobs-'));
  teardown.add('blob dir', async () => rmSync(blobDir, { recursive: true, force: true }));
  const port = await freePortOf();
  const url = `http://127.0.0.1:${port}`;
  const coordinator = spawnTsx('coordinator', 'apps/coordinator/src/main.ts', {
    env: {
      REDIS_URL: redisServer.url,
      FLOWFLEET_PREFIX: prefix,
      FLOWFLEET_PORT: String(port),
      FLOWFLEET_BLOB_DIR: blobDir,
      FLOWFLEET_TRAINER_TOKEN: BENCH_TOKENS.trainer,
      FLOWFLEET_VIEWER_TOKEN: BENCH_TOKENS.viewer,
      FLOWFLEET_WORKER_TOKEN: BENCH_TOKENS.worker,
      FLOWFLEET_LOG_LEVEL: 'warn',
      FLOWFLEET_HEARTBEAT_TTL_MS: '3000',
      FLOWFLEET_JOB_RETENTION_SECONDS: String(RETENTION_S),
      FLOWFLEET_RESULT_RETENTION_SECONDS: String(RETENTION_S),
      FLOWFLEET_WEIGHT_VERSIONS_KEPT: args['versions-kept'],
      FLOWFLEET_WEIGHT_GRACE_SECONDS: '5',
      FLOWFLEET_RETENTION_SWEEP_MS: String(SWEEP_MS),
      FLOWFLEET_EVENTS_MAX_LEN: '2000',
    },
  });
  teardown.add('coordinator', () => coordinator.stop('SIGTERM'));
  const client = FlowfleetClient.create({ baseUrl: url, token: BENCH_TOKENS.trainer });
  teardown.add('client', () => client.close());

  const workerEnv = (id: string): Record<string, string> => ({
    REDIS_URL: redisServer.url,
    FLOWFLEET_COORDINATOR_URL: url,
    FLOWFLEET_WORKER_TOKEN: BENCH_TOKENS.worker,
    FLOWFLEET_PREFIX: prefix,
    FLOWFLEET_WORKER_ID: id,
    FLOWFLEET_BACKEND: 'ort-cpu',
    FLOWFLEET_ORT_INTRA_OP_THREADS: '1',
    FLOWFLEET_HEARTBEAT_TTL_MS: '3000',
    FLOWFLEET_LOCK_MS: '2000',
    FLOWFLEET_STALLED_INTERVAL_MS: '1000',
    FLOWFLEET_MAX_STALLED_COUNT: '100',
    FLOWFLEET_POLL_MS: '200',
    FLOWFLEET_LOG_LEVEL: 'warn',
  });
  const workers = new Map<string, BenchChild>();
  const startWorker = (id: string): BenchChild => {
    const child = spawnTsx(id, 'apps/worker/src/main.ts', { env: workerEnv(id) });
    workers.set(id, child);
    return child;
  };
  const ids = Array.from({ length: WORKERS }, (_, i) => `soak-w${i + 1}`);
  for (const id of ids) startWorker(id);
  teardown.add('workers', () =>
    Promise.allSettled([...workers.values()].map((w) => w.stop('SIGTERM', 15_000))),
  );
  await waitForLive(client, ids, coordinator);

  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
  teardown.add('redis client', () => redis.quit());
  const ledger = new SoakLedger(client);
  let version = 0;
  const sync = async (): Promise<number> => {
    version += 1;
    const bytes = encodeWeights(initWeights(wan21MiniCard.config, version, 'dit'));
    const { sha256 } = await client.uploadBlob(bytes);
    await client.syncWeights('dit', version, sha256);
    return bytes.byteLength;
  };
  const versionBytes = await sync();

  // The lane's completions, counted per job: a job completed twice is a duplicate.
  const first = await ledger.submitOne(version);
  const redisUrl = new URL(redisServer.url);
  const events = new QueueEvents(first.lane, {
    connection: { host: redisUrl.hostname, port: Number(redisUrl.port) },
    prefix: `{${prefix}}:bull`,
  });
  teardown.add('queue events', () => events.close());
  events.on('completed', ({ jobId }) => ledger.countCompletion(jobId));
  await events.waitUntilReady();

  const started = Date.now();
  const elapsedS = (): number => (Date.now() - started) / 1000;
  const endAt = started + MINUTES * 60_000;
  const samples: { t: number; values: Record<string, number> }[] = [];
  let kills = 0;
  let syncs = 1;
  const sample = async (): Promise<void> => {
    const values: Record<string, number> = {};
    values['rss.coordinator'] = rssBytes(coordinator.pid) ?? Number.NaN;
    values['rss.redis'] = rssBytes(redisServer.pid) ?? Number.NaN;
    for (const [id, child] of workers) values[`rss.${id}`] = rssBytes(child.pid) ?? Number.NaN;
    const figures = await redisFigures(redis);
    values['redis.usedMemory'] = figures.usedMemoryBytes;
    values['redis.keys'] = figures.keys;
    values['blobStore.bytes'] = await directoryBytes(blobDir);
    values['redis.laneEvents'] = await redis.xlen(`{${prefix}}:bull:${first.lane}:events`);
    values['jobs.completed'] = ledger.completed;
    samples.push({ t: round(elapsedS(), 1), values });
  };
  await sample();
  const timers = [
    setInterval(
      () => void sample().catch((e: unknown) => console.error('sample', e)),
      SAMPLE_EVERY_S * 1000,
    ),
    // The first worker is never killed: its RSS is one continuous series. The others take turns.
    setInterval(() => {
      const id = ids[1 + (kills % (ids.length - 1))]!;
      kills += 1;
      const doomed = workers.get(id)!;
      void doomed.stop('SIGKILL').then(() => startWorker(id));
    }, KILL_EVERY_S * 1000),
  ];
  teardown.add('timers', async () => timers.forEach(clearInterval));
  let lastSyncAt = Date.now();
  await ledger.rounds(
    ROUND,
    () => Date.now() < endAt,
    async () => {
      // A new version once per --sync-every seconds, between rounds (as a trainer pushes one).
      if (Date.now() - lastSyncAt >= SYNC_EVERY_S * 1000) {
        await sync();
        syncs += 1;
        lastSyncAt = Date.now();
      }
      return version;
    },
  );
  timers.forEach(clearInterval);
  await sample();
  const outcome = await ledger.drain(90_000);

  const series = seriesFigures(samples, STEADY_FROM_S);
  const figures = {
    ...outcome,
    minutes: MINUTES,
    workers: WORKERS,
    workerKills: kills,
    weightSyncs: syncs,
    weightVersionBytes: versionBytes,
    rolloutsPerSecond: round(outcome.completed / (MINUTES * 60), 2),
    steadyFromS: STEADY_FROM_S,
    retention: {
      jobAndResultSeconds: RETENTION_S,
      weightVersionsKept: Number(args['versions-kept']),
      graceSeconds: 5,
      sweepMs: SWEEP_MS,
      eventsMaxLen: 2000,
    },
    series,
  };
  printTable(
    Object.entries(series).map(([name, s]) => {
      const bytes = name.startsWith('rss.') || name.endsWith('Memory') || name.endsWith('bytes');
      const f = bytes ? formatBytes : (v: number) => String(round(v, 1));
      return {
        series: name,
        first: f(s.first),
        'steady start': f(s.atSteadyStart),
        last: f(s.last),
        'steady max': f(s.steadyMax),
        'slope/min': f(s.slopePerMinute),
        'relative growth': s.relativeGrowth,
      };
    }),
  );
  const { accepted, completed, lost, duplicated, mismatched, failed } = outcome;
  console.log(
    `\njobs: accepted ${accepted}, completed ${completed}, lost ${lost}, duplicated ${duplicated}, ` +
      `mismatched ${mismatched}, failed attempts seen ${failed}; ${kills} worker kills, ${syncs} weight syncs`,
  );
  // The coordinator logs at warn: a failed sweep would show here (and explain any growth).
  const sweepFailures = coordinator
    .output()
    .split('\n')
    .filter((l) => l.includes('retention sweep failed'));
  if (sweepFailures.length > 0)
    console.error(`${sweepFailures.length} failed sweeps, last: ${sweepFailures.at(-1)}`);
  const body = { figures, samples, command: `npm run soak -- ${process.argv.slice(2).join(' ')}` };
  if (args.out === undefined) console.log(`wrote ${writeResults('soak', body)}`);
  else writeFileSync(args.out, `${JSON.stringify({ benchmark: 'soak', ...body }, null, 2)}\n`);
});
