// Cost counters of one bench phase: commands Redis processed and CPU it used (from INFO), and the
// CPU this Node process used. Everything in-process shares one event loop on 2 cores, so CPU per
// job is what explains a throughput figure.
import type { Redis } from 'ioredis';

/** A reading of the counters. */
export interface CostSample {
  readonly redisCommands: number;
  /** INFO commandstats: command → [calls, µs]. */
  readonly commandStats: ReadonlyMap<string, readonly [number, number]>;
  readonly redisCpuMs: number;
  readonly nodeCpuMs: number;
  readonly at: number;
}

/** Per-job costs between two samples. */
export interface PhaseCost {
  readonly redisCommandsPerJob: number;
  /** The commands with the most Redis time per job: `name calls/job µs/job`. */
  readonly redisTopCommands: readonly string[];
  readonly redisCpuUsPerJob: number;
  readonly nodeCpuUsPerJob: number;
}

function field(info: string, name: string): number {
  const match = new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info);
  return match === null ? Number.NaN : Number(match[1]);
}

function commandStats(info: string): Map<string, readonly [number, number]> {
  const stats = new Map<string, readonly [number, number]>();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    stats.set(match[1]!, [Number(match[2]), Number(match[3])]);
  }
  return stats;
}

/** Reads the counters (three INFO calls: they count themselves, noise at 1e2+ jobs). */
export async function sampleCost(redis: Redis): Promise<CostSample> {
  const [stats, cpu, commands] = await Promise.all([
    redis.info('stats'),
    redis.info('cpu'),
    redis.info('commandstats'),
  ]);
  const usage = process.cpuUsage();
  return {
    redisCommands: field(stats, 'total_commands_processed'),
    commandStats: commandStats(commands),
    redisCpuMs: (field(cpu, 'used_cpu_user') + field(cpu, 'used_cpu_sys')) * 1e3,
    nodeCpuMs: (usage.user + usage.system) / 1e3,
    at: performance.now(),
  };
}

/** Per-job costs of `jobs` jobs between `before` and `after`. */
export function costPerJob(before: CostSample, after: CostSample, jobs: number): PhaseCost {
  const top = [...after.commandStats]
    .map(([name, [calls, usec]]) => {
      const [calls0, usec0] = before.commandStats.get(name) ?? [0, 0];
      return { name, calls: (calls - calls0) / jobs, usec: (usec - usec0) / jobs };
    })
    .filter((c) => c.calls > 0)
    .sort((a, b) => b.usec - a.usec)
    .slice(0, 6)
    .map((c) => `${c.name} ${c.calls.toFixed(1)}/job ${c.usec.toFixed(0)}µs/job`);
  return {
    redisCommandsPerJob: (after.redisCommands - before.redisCommands) / jobs,
    redisTopCommands: top,
    redisCpuUsPerJob: ((after.redisCpuMs - before.redisCpuMs) * 1e3) / jobs,
    nodeCpuUsPerJob: ((after.nodeCpuMs - before.nodeCpuMs) * 1e3) / jobs,
  };
}
