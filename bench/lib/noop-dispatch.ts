// The fleet's dispatch cost per job, on no-op jobs (bench/lib/noop-card.ts: forwards that return
// zeros at once): a coordinator on the bench's Redis, one worker process serving the no-op card,
// jobs enqueued through the SDK over HTTP; CPU per job of this process (coordinator + SDK), of the
// worker process, and of Redis, with Redis commands per job. Nothing polls while it runs: the end
// is seen by the coordinator's store of the last summary, then one status read.
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { FlowfleetClient } from '@flowfleet/client';
import { createCardRegistry, DEFAULT_CARD_REGISTRY } from '@flowfleet/models';
import { WAN21_MINI } from '@flowfleet/models/wan21';
import type { Redis } from 'ioredis';
import { BENCH_TOKENS, benchPrefix, startBenchCoordinator } from './bench-fleet.js';
import { noopCard } from './noop-card.js';
import { request } from './child-process.js';
import { costPerJob, sampleCost } from './redis-stats.js';
import type { Teardown } from './teardown.js';
import { startWorkerProcesses, stopProcesses } from './worker-processes.js';

/** CPU per no-op job, µs. */
export interface DispatchCost {
  readonly jobs: number;
  readonly coordinatorNodeUs: number;
  readonly workerNodeUs: number;
  readonly nodeUs: number;
  readonly redisUs: number;
  readonly redisCommands: number;
  readonly redisTopCommands: readonly string[];
  readonly jobsPerSec: number;
}

/** What the phase needs. */
export interface DispatchOptions {
  readonly redisUrl: string;
  /** A connection for INFO. */
  readonly stats: Redis;
  readonly blobParent: string;
  readonly jobs: number;
  readonly teardown: Teardown;
}

const CARD_ID = 'bench-noop';
const WARMUP_JOBS = 30;

/** Runs the no-op phase and stops what it started. */
export async function measureDispatch(options: DispatchOptions): Promise<DispatchCost> {
  let stored = 0;
  let onStored: (() => void) | undefined;
  const coordinator = await startBenchCoordinator(
    options.redisUrl,
    benchPrefix('noop'),
    mkdtempSync(join(options.blobParent, 'ff-noop-blobs-')),
    (_jobId, file) => {
      if (file !== 'summary.json') return;
      stored += 1;
      onStored?.();
    },
    // The edge admits only models it has a card for: the no-op card, beside the shipped ones.
    createCardRegistry([
      ...DEFAULT_CARD_REGISTRY.cards,
      noopCard({ id: CARD_ID, config: WAN21_MINI }),
    ]),
  );
  options.teardown.add('no-op coordinator', () => coordinator.close());
  const client = FlowfleetClient.create({ baseUrl: coordinator.url, token: BENCH_TOKENS.trainer });
  const [worker] = await startWorkerProcesses('noop', 1, {
    redisUrl: options.redisUrl,
    coordinator,
    client,
    script: 'bench/lib/noop-worker-main.ts',
    env: { BENCH_NOOP_CARD: CARD_ID, FLOWFLEET_BACKEND: 'cpu' },
  });
  options.teardown.add('no-op worker', () => stopProcesses([worker!]));
  const workerCpuUs = async () => {
    const { cpu } = await request<{ cpu: NodeJS.CpuUsage }>(worker!, { op: 'cpu' });
    return cpu.user + cpu.system;
  };
  const run = async (jobs: number) => {
    const target = stored + jobs;
    const done = new Promise<void>((resolve) => {
      onStored = () => stored >= target && resolve();
    });
    const enqueued = await client.enqueueRound(
      Array.from({ length: jobs }, (_, i) => ({ prompt: `noop ${i}`, seeds: [1] })),
      { model: CARD_ID, steps: 1, shape: { frames: 1, height: 2, width: 2 } },
    );
    await done;
    await client.waitFor(enqueued.at(-1)!.id, { pollMs: 5, maxPollMs: 20, timeoutMs: 60_000 });
  };
  await run(WARMUP_JOBS);
  const before = await sampleCost(options.stats);
  const workerBefore = await workerCpuUs();
  const started = performance.now();
  await run(options.jobs);
  const seconds = (performance.now() - started) / 1000;
  const workerUs = (await workerCpuUs()) - workerBefore;
  const after = await sampleCost(options.stats);
  const cost = costPerJob(before, after, options.jobs);
  await stopProcesses([worker!]);
  await coordinator.close();
  return {
    jobs: options.jobs,
    coordinatorNodeUs: cost.nodeCpuUsPerJob,
    workerNodeUs: workerUs / options.jobs,
    nodeUs: cost.nodeCpuUsPerJob + workerUs / options.jobs,
    redisUs: cost.redisCpuUsPerJob,
    redisCommands: cost.redisCommandsPerJob,
    redisTopCommands: cost.redisTopCommands,
    jobsPerSec: options.jobs / seconds,
  };
}
