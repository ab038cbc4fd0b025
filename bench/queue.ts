// bench:queue — no-op rollouts (a card whose forwards return zeros at once; 1 step, one 1×2×2
// latent) through coordinator → lane → worker, against raw BullMQ (Queue.add + Worker with a
// no-op processor) on the same Redis, in the same process, with the same job options, payload
// shape and concurrency. A second baseline, the floor (bench/lib/floor-path.ts), is raw BullMQ
// plus only the I/O the design requires of any implementation: an HTTP request to enqueue and an
// HTTP upload of the two result files into the same durable file store. Two enqueue paths of
// ours: the coordinator's HTTP API through the SDK (what a trainer calls) and its RolloutService
// directly (the queue path without HTTP).
// Throughput: `BENCH_QUEUE_JOBS` jobs added with `BENCH_QUEUE_INFLIGHT` adds in flight, from the
// first add to the last completed event; rounds interleave the four paths. Latency:
// `BENCH_QUEUE_LATENCY_JOBS` jobs one at a time (no backlog, whatever a path's capacity), add →
// start of work (raw: the processor's first line; ours: the card's first forward), add →
// completed event, and ours' stages in between. Prints tables, writes bench/results/queue.json.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCardRegistry, WAN21_MINI } from '@flowfleet/models';
import { FlowfleetClient } from '@flowfleet/client';
import {
  laneForRequirements,
  requirementsFor,
  rolloutRequestSchema,
  type RolloutRequestInput,
} from '@flowfleet/protocol';
import { Redis } from 'ioredis';
import { percentile, printTable, round, writeResults } from './lib/bench-report.js';
import {
  BENCH_TOKENS,
  benchPrefix,
  closeWorkers,
  startBenchCoordinator,
  startBenchWorkers,
} from './lib/bench-fleet.js';
import {
  CompletionWatch,
  JobClock,
  lastPromptOf,
  promptOf,
  tagOf,
  type Stage,
} from './lib/job-tracker.js';
import { startFloorPath } from './lib/floor-path.js';
import { noopCard } from './lib/noop-card.js';
import { oneAtATime, throughput, type QueuePath, type Throughput } from './lib/queue-phases.js';
import { startRawPath } from './lib/raw-bullmq-path.js';
import { startBenchRedis } from './lib/redis-server.js';
import { runBench } from './lib/teardown.js';

const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const JOBS = env('BENCH_QUEUE_JOBS', 300);
const LATENCY_JOBS = env('BENCH_QUEUE_LATENCY_JOBS', 120);
const ROUNDS = env('BENCH_QUEUE_ROUNDS', 3);
const WORKERS = env('BENCH_QUEUE_WORKERS', 1);
const CONCURRENCY = env('BENCH_QUEUE_CONCURRENCY', 8);
const INFLIGHT = env('BENCH_QUEUE_INFLIGHT', 16);
const WARMUP_JOBS = 50;
const CARD_ID = 'bench-noop';
const SHAPE = { frames: 1, height: 2, width: 2 };

const clock = new JobClock();
const median = (values: readonly number[]): number => percentile(values, 50);

function body(tag: number): RolloutRequestInput {
  return { model: CARD_ID, prompt: promptOf(tag), seeds: [1], steps: 1, shape: SHAPE };
}

/** Column titles of the stage table (ms since the add was issued). */
const STAGE_TITLES: Record<Exclude<Stage, 'added'>, string> = {
  enqueued: 'add returned',
  started: 'work started',
  computed: 'forwards done',
  'result.safetensors': 'result stored',
  'summary.json': 'summary stored',
  done: 'completed event',
};

await runBench(async (teardown) => {
  const redis = await startBenchRedis();
  teardown.add('redis-server', () => redis.stop());
  const stats = new Redis(redis.url, { maxRetriesPerRequest: null });
  teardown.add('stats connection', async () => stats.disconnect());
  // BENCH_BLOB_PARENT=/dev/shm takes the disk (the blob store fsyncs every result) out.
  const blobDir = mkdtempSync(join(process.env['BENCH_BLOB_PARENT'] ?? tmpdir(), 'ff-blobs-'));
  teardown.add('blob dir', async () => rmSync(blobDir, { recursive: true, force: true }));

  // Ours: coordinator + workers serving the no-op card; the card and the blob store stamp stages.
  const card = noopCard({
    id: CARD_ID,
    config: WAN21_MINI,
    onForward: (kind, inputs) => {
      // With 1 step the dit runs once, last; only one-at-a-time phases read this stamp.
      if (kind === 'dit') return clock.stampCurrent('computed');
      const tokens = inputs['tokens'];
      const tag = tokens && tagOf(lastPromptOf(tokens.data, tokens.dims));
      if (tag !== undefined) clock.stamp(tag, 'started');
    },
  });
  const cards = createCardRegistry([card]);
  const coordinator = await startBenchCoordinator(
    redis.url,
    benchPrefix('queue'),
    blobDir,
    (jobId, file) => clock.stampJob(jobId, file),
    cards,
  );
  teardown.add('coordinator', () => coordinator.close());
  const workers = await startBenchWorkers(WORKERS, {
    redisUrl: redis.url,
    coordinator,
    card,
    concurrency: CONCURRENCY,
  });
  teardown.add('workers', () => closeWorkers(workers));
  const request = rolloutRequestSchema().parse(body(0));
  const requirements = requirementsFor(request, cards.capabilities(request.model, request));
  const lane = laneForRequirements(requirements);
  const bullPrefix = coordinator.coordinator.services.keys.bullPrefix;
  const laneWatch = await CompletionWatch.open(redis.url, lane, bullPrefix);
  teardown.add('lane events', () => laneWatch.close());
  const { rollouts } = coordinator.coordinator.services;
  const service: QueuePath = {
    name: 'ours: RolloutService.enqueue',
    watch: laneWatch,
    // The route validates the body before enqueue (fastify, the route's zod schema): so here.
    add: async (tag) => (await rollouts.enqueue(rollouts.requestSchema.parse(body(tag)))).id,
  };
  // What a trainer calls: the SDK's enqueueRollouts (POST /v1/rollouts, answer validated).
  const trainer = FlowfleetClient.create({ baseUrl: coordinator.url, token: BENCH_TOKENS.trainer });
  const http: QueuePath = {
    name: 'ours: POST /v1/rollouts',
    watch: laneWatch,
    add: async (tag) => (await trainer.enqueueRollouts(body(tag))).id,
  };
  const rawOptions = {
    redisUrl: redis.url,
    workers: WORKERS,
    concurrency: CONCURRENCY,
    request,
    requirements,
    clock,
    teardown,
  };
  const raw = await startRawPath(rawOptions);
  // Ours first: the floor then writes result files of the sizes ours stored.
  await throughput(clock, service, WARMUP_JOBS, INFLIGHT, stats);
  const stored = join(blobDir, 'results', readdirSync(join(blobDir, 'results'))[0]!);
  const floorDir = join(blobDir, 'floor');
  const floor = await startFloorPath({
    ...rawOptions,
    blobDir: floorDir,
    resultBytes: statSync(join(stored, 'result.safetensors')).size,
    summaryBytes: statSync(join(stored, 'summary.json')).size,
  });

  const paths = [raw, floor, service, http];
  console.log(
    `redis-server ${redis.version}; ${WORKERS} worker(s) × concurrency ${CONCURRENCY}; ` +
      `${JOBS} jobs × ${ROUNDS} rounds per path, ${INFLIGHT} adds in flight; ` +
      `latency: ${LATENCY_JOBS} jobs per path, one in flight; blobs in ${blobDir}`,
  );
  for (const path of paths) await throughput(clock, path, WARMUP_JOBS, INFLIGHT, stats);
  const results = new Map(paths.map((p) => [p.name, [] as Throughput[]]));
  const latency = new Map(paths.map((p) => [p.name, new Map<Stage, number[]>()]));
  for (let r = 0; r < ROUNDS; r++) {
    const order = paths.map((_, i) => paths[(i + r) % paths.length]!);
    for (const path of order) {
      results.get(path.name)!.push(await throughput(clock, path, JOBS, INFLIGHT, stats));
    }
    for (const path of order) {
      const stages = await oneAtATime(clock, path, Math.ceil(LATENCY_JOBS / ROUNDS));
      const all = latency.get(path.name)!;
      for (const [stage, values] of stages) all.set(stage, [...(all.get(stage) ?? []), ...values]);
    }
  }

  const summary = paths.map((path) => {
    const runs = results.get(path.name)!;
    const lat = latency.get(path.name)!;
    const mean = (pick: (t: Throughput) => number) =>
      runs.reduce((sum, t) => sum + pick(t), 0) / runs.length;
    return {
      path: path.name,
      jobsPerSec: median(runs.map((t) => t.jobsPerSec)),
      jobsPerSecRuns: runs.map((t) => round(t.jobsPerSec, 0)),
      addsPerSec: median(runs.map((t) => t.addsPerSec)),
      addToStartP50Ms: median(lat.get('started')!),
      addToStartP99Ms: percentile(lat.get('started')!, 99),
      addToDoneP50Ms: median(lat.get('done')!),
      addToDoneP99Ms: percentile(lat.get('done')!, 99),
      /** p50 ms since the add, per stage this path stamps. */
      stagesP50Ms: Object.fromEntries(
        [...lat].map(([stage, values]) => [stage, round(median(values), 3)]),
      ) as Partial<Record<Stage, number>>,
      redisCommandsPerJob: mean((t) => t.cost.redisCommandsPerJob),
      redisCpuUsPerJob: mean((t) => t.cost.redisCpuUsPerJob),
      nodeCpuUsPerJob: mean((t) => t.cost.nodeCpuUsPerJob),
      redisTopCommands: runs.at(-1)!.cost.redisTopCommands,
    };
  });
  type Row = (typeof summary)[number];
  const [rawRow, floorRow, serviceRow, httpRow] = summary as [Row, Row, Row, Row];
  const ratio = (row: Row, base = rawRow) => round(row.jobsPerSec / base.jobsPerSec, 3);
  const delta = (row: Row, base = rawRow) => round(row.addToStartP50Ms - base.addToStartP50Ms, 3);
  printTable(
    summary.map((row) => ({
      path: row.path,
      'jobs/s': round(row.jobsPerSec, 0),
      'vs raw': ratio(row),
      'vs floor': ratio(row, floorRow),
      'add→start p50 ms': round(row.addToStartP50Ms, 2),
      'p99 ms': round(row.addToStartP99Ms, 2),
      'Δp50 vs raw ms': round(delta(row), 2),
      'Δp50 vs floor ms': round(delta(row, floorRow), 2),
      'add→done p50 ms': round(row.addToDoneP50Ms, 2),
      'done p99 ms': round(row.addToDoneP99Ms, 2),
      'redis cmds/job': round(row.redisCommandsPerJob, 1),
      'redis CPU µs/job': round(row.redisCpuUsPerJob, 0),
      'node CPU µs/job': round(row.nodeCpuUsPerJob, 0),
    })),
  );
  console.log('\nOne job in flight: p50 ms since the add was issued, per stage');
  printTable(
    summary.map((row) => ({
      path: row.path,
      ...Object.fromEntries(
        Object.entries(STAGE_TITLES).map(([stage, title]) => [
          title,
          row.stagesP50Ms[stage as Stage] === undefined
            ? '—'
            : round(row.stagesP50Ms[stage as Stage]!, 2),
        ]),
      ),
    })),
  );
  const file = writeResults('queue', {
    figures: {
      throughputRatio: ratio(httpRow),
      throughputRatioQueuePath: ratio(serviceRow),
      floorThroughputRatio: ratio(floorRow),
      throughputRatioVsFloor: ratio(httpRow, floorRow),
      addToStartP50DeltaMs: delta(httpRow),
      addToStartP50DeltaMsQueuePath: delta(serviceRow),
      floorAddToStartP50DeltaMs: delta(floorRow),
      addToStartP50DeltaMsVsFloor: delta(httpRow, floorRow),
      addToStartP50Ms: round(httpRow.addToStartP50Ms, 3),
      addToStartP99Ms: round(httpRow.addToStartP99Ms, 3),
      rawAddToStartP50Ms: round(rawRow.addToStartP50Ms, 3),
      rawAddToStartP99Ms: round(rawRow.addToStartP99Ms, 3),
      rawThroughputPerSec: round(rawRow.jobsPerSec, 0),
      floorThroughputPerSec: round(floorRow.jobsPerSec, 0),
      floorAddToStartP50Ms: round(floorRow.addToStartP50Ms, 3),
      oursThroughputPerSec: round(httpRow.jobsPerSec, 0),
      oursQueuePathThroughputPerSec: round(serviceRow.jobsPerSec, 0),
      throughputGoalMet: ratio(httpRow) >= 0.9,
      latencyGoalMet: delta(httpRow) <= 0.5,
    },
    setup: {
      jobs: JOBS,
      rounds: ROUNDS,
      latencyJobs: LATENCY_JOBS,
      workers: WORKERS,
      concurrency: CONCURRENCY,
      addsInFlight: INFLIGHT,
      redis: redis.version,
      blobDir: process.env['BENCH_BLOB_PARENT'] ?? tmpdir(),
      resultFileBytes: {
        'result.safetensors': statSync(join(stored, 'result.safetensors')).size,
        'summary.json': statSync(join(stored, 'summary.json')).size,
      },
      card: `${CARD_ID}: no-op forwards, ${request.steps} step, latent ${SHAPE.frames}×${SHAPE.height}×${SHAPE.width}, CFG ${request.guidanceScale}, eager`,
      process: 'redis-server in its own process; coordinator, workers and driver in this one',
    },
    paths: summary.map((row) =>
      Object.fromEntries(
        Object.entries(row).map(([k, v]) => [k, typeof v === 'number' ? round(v, 3) : v]),
      ),
    ),
  });
  console.log(`wrote ${file}`);
});
