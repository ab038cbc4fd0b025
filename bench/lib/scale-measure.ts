// The measurements of one bench:scale phase (a fleet of a given size registered and beating):
// query latencies over HTTP, Redis load from INFO deltas over a quiet window, and enqueue → start
// latency of no-op jobs served by real worker processes.
import type { FlowfleetClient } from '@flowfleet/client';
import type { Redis } from 'ioredis';
import { percentile, round } from './bench-report.js';
import { sampleCost, type CostSample } from './redis-stats.js';

/** Latency figures of one query, ms (and the size of its answer). */
export interface QueryFigures {
  readonly n: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly meanMs: number;
  readonly responseKb: number;
}

/** Summarises latency samples. */
export function latencyFigures(samplesMs: readonly number[], responseBytes = 0): QueryFigures {
  return {
    n: samplesMs.length,
    p50Ms: round(percentile(samplesMs, 50), 2),
    p99Ms: round(percentile(samplesMs, 99), 2),
    maxMs: round(Math.max(...samplesMs), 2),
    meanMs: round(samplesMs.reduce((a, b) => a + b, 0) / samplesMs.length, 2),
    responseKb: round(responseBytes / 1024, 1),
  };
}

/**
 * Times `count` sequential GETs of `path` (after `warmup` untimed ones), each until its body is
 * read; a non-200 answer fails the bench.
 * @throws Error on a non-200 answer
 */
export async function timeQuery(
  url: string,
  token: string,
  path: string,
  { warmup, count }: { warmup: number; count: number },
): Promise<QueryFigures & { cpuMsPerQuery?: number }> {
  const samples: number[] = [];
  let bytes = 0;
  for (let i = 0; i < warmup + count; i += 1) {
    const started = performance.now();
    const response = await fetch(`${url}${path}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const body = await response.arrayBuffer();
    const ms = performance.now() - started;
    if (response.status !== 200) {
      throw new Error(
        `GET ${path}: ${response.status} ${Buffer.from(body).toString().slice(0, 500)}`,
      );
    }
    bytes = body.byteLength;
    if (i >= warmup) samples.push(ms);
  }
  return latencyFigures(samples, bytes);
}

/** Redis load over a window: commands/s, CPU as % of one core, the busiest commands. */
export interface RedisLoad {
  readonly windowS: number;
  readonly commandsPerSec: number;
  readonly cpuPercentOfOneCore: number;
  /** `name calls/s` for the commands with the most calls. */
  readonly topCommands: Readonly<Record<string, number>>;
  readonly usedMemoryMb: number;
  readonly connectedClients: number;
}

function infoField(info: string, name: string): number {
  return Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1]);
}

/** The load between two samples (the INFO calls themselves are a handful of commands). */
export function redisLoad(before: CostSample, after: CostSample, info: string): RedisLoad {
  const seconds = (after.at - before.at) / 1000;
  const top = [...after.commandStats]
    .map(
      ([name, [calls]]) =>
        [name, (calls - (before.commandStats.get(name)?.[0] ?? 0)) / seconds] as const,
    )
    .filter(([, rate]) => rate > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6);
  return {
    windowS: round(seconds, 2),
    commandsPerSec: round((after.redisCommands - before.redisCommands) / seconds, 1),
    cpuPercentOfOneCore: round(
      ((after.redisCpuMs - before.redisCpuMs) / (seconds * 1000)) * 100,
      2,
    ),
    topCommands: Object.fromEntries(top.map(([name, rate]) => [name, round(rate, 1)])),
    usedMemoryMb: round(infoField(info, 'used_memory') / 2 ** 20, 1),
    connectedClients: infoField(info, 'connected_clients'),
  };
}

/** The load on every master over one window: the sum, and each master's share. */
export interface ClusterLoad extends RedisLoad {
  readonly perMaster: readonly (RedisLoad & {
    readonly node: string;
    readonly commandShare: number;
  })[];
}

type Master = { readonly node: string; readonly redis: Redis };

/** Samples every master around `during` (a wait of the window, or work to watch). */
export async function measureLoad(
  masters: readonly Master[],
  during: () => Promise<unknown>,
): Promise<ClusterLoad> {
  const before = await Promise.all(masters.map(({ redis }) => sampleCost(redis)));
  await during();
  const after = await Promise.all(masters.map(({ redis }) => sampleCost(redis)));
  const each = await Promise.all(
    masters.map(async ({ node, redis }, i) => {
      const info = `${await redis.info('memory')}\n${await redis.info('clients')}`;
      return { node, ...redisLoad(before[i]!, after[i]!, info) };
    }),
  );
  const sum = (pick: (load: RedisLoad) => number) => each.reduce((a, load) => a + pick(load), 0);
  const commands = sum((load) => load.commandsPerSec);
  const top: Record<string, number> = {};
  for (const load of each) {
    for (const [name, rate] of Object.entries(load.topCommands))
      top[name] = round((top[name] ?? 0) + rate, 1);
  }
  return {
    windowS: each[0]?.windowS ?? 0,
    commandsPerSec: round(commands, 1),
    cpuPercentOfOneCore: round(
      sum((load) => load.cpuPercentOfOneCore),
      2,
    ),
    topCommands: top,
    usedMemoryMb: round(
      sum((load) => load.usedMemoryMb),
      1,
    ),
    connectedClients: sum((load) => load.connectedClients),
    perMaster: each.map((load) => ({
      ...load,
      commandShare: round(commands > 0 ? load.commandsPerSec / commands : 0, 3),
    })),
  };
}

/** Enqueue → start latency of no-op jobs, one at a time (the workers idle when each arrives). */
export interface EnqueueFigures {
  readonly enqueueToStart: QueryFigures;
  /** The POST /v1/rollouts round trip alone (admission, capacity check, add). */
  readonly enqueueCall: QueryFigures;
}

/**
 * Enqueues `count` single-seed no-op rollouts one after another, each awaited to completion;
 * start = the job's `startedAt` (BullMQ processedOn, ms), measured from just before the POST.
 * @throws Error when a job fails or never starts
 */
export async function measureEnqueueToStart(
  client: FlowfleetClient,
  model: string,
  { warmup, count }: { warmup: number; count: number },
): Promise<EnqueueFigures> {
  const toStart: number[] = [];
  const calls: number[] = [];
  for (let i = 0; i < warmup + count; i += 1) {
    const sentAt = Date.now();
    const started = performance.now();
    const job = await client.enqueueRollouts({
      model,
      prompt: `scale ${i}`,
      seeds: [i + 1],
      steps: 1,
      shape: { frames: 1, height: 2, width: 2 },
    });
    const callMs = performance.now() - started;
    const status = await client.waitFor(job.id, {
      longPollMs: 0,
      pollMs: 5,
      maxPollMs: 20,
      timeoutMs: 30_000,
    });
    if (status.startedAt === undefined) throw new Error(`job ${job.id} has no startedAt`);
    if (i < warmup) continue;
    calls.push(callMs);
    toStart.push(Date.parse(status.startedAt) - sentAt);
  }
  return { enqueueToStart: latencyFigures(toStart), enqueueCall: latencyFigures(calls) };
}
