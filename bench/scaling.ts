// bench:scaling — what an autoscaler's scrape costs and what it sees. A coordinator in-process on a
// real Redis, a fleet of registered worker manifests over three device classes (cuda/sm90,
// cuda/sm80, cpu/x86-64-v3: manifest records only — nothing computes, so no GPU is involved),
// lanes with queued jobs enqueued through the API, plus prioritised jobs added the way BullMQ
// producers with `priority` add them. Timed in the same run, rounds alternating: GET /v1/scaling
// against its baseline GET /v1/lanes (the same Redis reads — workers, lanes, per-lane counts — and
// the same per-lane eligibility, without the per-class plan), both through fastify's inject so the
// figure is the coordinator's work. Also reported: how many of the waiting jobs a list-length
// scaler (LLEN of each lane's BullMQ wait list, what KEDA's Redis list scaler reads) sees, against
// the backlog /v1/scaling counts (waiting + prioritized + delayed).
// Flags: --workers (per class), --jobs (per lane, via the API), --prioritized (per lane), --rounds,
// --requests (per route per round).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createCoordinator, coordinatorKeys } from '@flowfleet/coordinator';
import { ScalingSchema, type WorkerManifest } from '@flowfleet/protocol';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { percentile, printTable, round, writeResults } from './lib/bench-report.js';
import { benchPrefix, deletePrefix } from './lib/bench-fleet.js';
import { startBenchRedis } from './lib/redis-server.js';
import { runBench } from './lib/teardown.js';

const { values: flags } = parseArgs({
  options: {
    workers: { type: 'string', default: '20' },
    jobs: { type: 'string', default: '10' },
    prioritized: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '5' },
    requests: { type: 'string', default: '40' },
  },
});
const WORKERS_PER_CLASS = Number(flags.workers);
const JOBS_PER_LANE = Number(flags.jobs);
const PRIORITIZED_PER_LANE = Number(flags.prioritized);
const ROUNDS = Number(flags.rounds);
const REQUESTS = Number(flags.requests);

const CLASSES = [
  { device: 'cuda', arch: 'sm90' },
  { device: 'cuda', arch: 'sm80' },
  { device: 'cpu', arch: 'x86-64-v3' },
] as const;

function row(op: string, device: string, arch: string) {
  return {
    registry: 'kernels',
    key: { op, device, arch, variant: 'default' },
    available: true,
    source: 'bench',
    meta: {},
  };
}

/** A manifest of a worker of `platform` that runs wan21-mini (kernels on its device and cpu). */
function manifest(workerId: string, platform: (typeof CLASSES)[number]): WorkerManifest {
  const ops = ['flow_match_step', 'flow_sde_step', 'cfg_combine'];
  return {
    workerId,
    host: 'bench-host',
    pid: 1,
    platform: { ...platform, features: [], cpuArch: 'x86-64-v3' },
    kernels: [
      ...ops.map((op) => row(op, platform.device, platform.arch)),
      ...(platform.device === 'cpu' ? [] : ops.map((op) => row(op, 'cpu', 'generic'))),
    ],
    components: [],
    models: ['wan21-mini'],
    concurrency: 2,
    weights: {},
    startedAt: new Date().toISOString(),
    version: '0.1.0',
  };
}

/** Request bodies of distinct lanes: device sets × cuda minimum × sampler × CFG on/off. */
function laneBodies(): Record<string, unknown>[] {
  const bodies: Record<string, unknown>[] = [];
  for (const devices of [['cuda'], ['cpu'], ['cpu', 'cuda']]) {
    for (const minArch of [{}, { cuda: 'sm90' }]) {
      if (!devices.includes('cuda') && 'cuda' in minArch) continue;
      for (const sampler of ['sde', 'ode']) {
        for (const guidanceScale of [1, 4.5]) {
          bodies.push({
            model: 'wan21-mini',
            prompt: 'a red fox in snow',
            seeds: [1],
            sampler,
            guidanceScale,
            constraints: { devices, minArch },
          });
        }
      }
    }
  }
  return bodies;
}

await runBench(async (teardown) => {
  const redisServer = await startBenchRedis();
  teardown.add('redis-server', () => redisServer.stop());
  const prefix = benchPrefix('scaling');
  const blobDir = mkdtempSync(join(tmpdir(), 'flowfleet-bench-scaling-'));
  teardown.add('blob dir', async () => rmSync(blobDir, { recursive: true, force: true }));
  const coordinator = createCoordinator({
    redisUrl: redisServer.url,
    prefix,
    tokens: null,
    blobDir,
  });
  await coordinator.start(0);
  teardown.add('coordinator', async () => {
    await coordinator.close();
    await deletePrefix(redisServer.url, prefix);
  });
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
  teardown.add('redis client', () => redis.quit());
  const keys = coordinatorKeys(prefix);

  for (const platform of CLASSES) {
    for (let i = 0; i < WORKERS_PER_CLASS; i++) {
      const id = `w-${platform.device}-${platform.arch}-${i}`;
      const beat = { workerId: id, at: new Date().toISOString(), activeJobs: i % 3, lanes: [] };
      await redis
        .multi()
        .set(keys.worker(id), JSON.stringify(manifest(id, platform)))
        .sadd(keys.workers, id)
        .set(keys.heartbeat(id), JSON.stringify(beat), 'PX', 3_600_000)
        .exec();
    }
  }
  const lanes = new Set<string>();
  for (const body of laneBodies()) {
    for (let j = 0; j < JOBS_PER_LANE; j++) {
      const answer = await coordinator.app.inject({
        method: 'POST',
        url: '/v1/rollouts',
        payload: { ...body, seeds: [j] },
      });
      if (answer.statusCode !== 202) throw new Error(`enqueue: ${answer.body}`);
      lanes.add((answer.json() as { lane: string }).lane);
    }
  }
  for (const lane of lanes) {
    const queue = new Queue(lane, { connection: redis, prefix: keys.laneBullPrefix(lane) });
    await queue.addBulk(
      Array.from({ length: PRIORITIZED_PER_LANE }, (_, i) => ({
        name: 'rollout',
        data: {},
        opts: { priority: 1 + (i % 5) },
      })),
    );
    await queue.close();
  }

  const timed = async (url: string): Promise<number[]> => {
    const samples: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const started = performance.now();
      const answer = await coordinator.app.inject({ method: 'GET', url });
      samples.push(performance.now() - started);
      if (answer.statusCode !== 200) throw new Error(`${url}: ${answer.statusCode}`);
    }
    return samples;
  };
  // Warm-up (JIT, the fleet reader's manifest cache, the remembered classes' first write).
  await timed('/v1/lanes');
  await timed('/v1/scaling');
  const scalingMs: number[] = [];
  const lanesMs: number[] = [];
  const ratios: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? ['/v1/lanes', '/v1/scaling'] : ['/v1/scaling', '/v1/lanes'];
    const medians: Record<string, number> = {};
    for (const url of order) {
      const samples = await timed(url);
      (url === '/v1/scaling' ? scalingMs : lanesMs).push(...samples);
      medians[url] = percentile(samples, 50);
    }
    ratios.push((medians['/v1/scaling'] ?? 0) / (medians['/v1/lanes'] ?? 1));
  }

  const scaling = ScalingSchema.parse(
    (await coordinator.app.inject({ method: 'GET', url: '/v1/scaling' })).json(),
  );
  let listLength = 0;
  let backlog = 0;
  for (const lane of lanes) {
    listLength += await redis.llen(`${keys.laneBullPrefix(lane)}:${lane}:wait`);
    const counts = await coordinator.services.queues.counts(lane);
    backlog += counts.waiting + counts.prioritized + counts.delayed;
  }
  const figures = {
    workers: WORKERS_PER_CLASS * CLASSES.length,
    classes: CLASSES.length,
    lanes: lanes.size,
    jobs: backlog,
    scalingMedianMs: round(percentile(scalingMs, 50)),
    scalingP90Ms: round(percentile(scalingMs, 90)),
    lanesMedianMs: round(percentile(lanesMs, 50)),
    lanesP90Ms: round(percentile(lanesMs, 90)),
    scalingOverLanesMedianRatio: round(percentile(ratios, 50)),
    listLengthSeen: listLength,
    backlogTotal: backlog,
    listLengthShare: round(listLength / backlog),
  };
  printTable([
    {
      route: 'GET /v1/lanes (baseline)',
      medianMs: figures.lanesMedianMs,
      p90Ms: figures.lanesP90Ms,
    },
    { route: 'GET /v1/scaling', medianMs: figures.scalingMedianMs, p90Ms: figures.scalingP90Ms },
  ]);
  printTable(
    scaling.classes.map((c) => ({
      class: c.deviceClass,
      workers: c.workers,
      busy: `${c.busy}/${c.capacity}`,
      exclusive: c.exclusiveBacklog,
      shared: `${c.sharedBacklog} (${round(c.sharedAssigned, 1)})`,
      desired: c.desiredReplicas,
    })),
  );
  console.log(
    `scaling/lanes median ratio ${figures.scalingOverLanesMedianRatio} over ${ROUNDS} rounds; ` +
      `a list-length scaler sees ${listLength} of ${backlog} waiting jobs (${figures.listLengthShare})`,
  );
  const file = writeResults('scaling', {
    figures,
    settings: { WORKERS_PER_CLASS, JOBS_PER_LANE, PRIORITIZED_PER_LANE, ROUNDS, REQUESTS },
    classes: scaling.classes,
  });
  console.log(`wrote ${file}`);
});
