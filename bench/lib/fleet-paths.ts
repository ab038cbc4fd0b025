// The paths bench:fleet compares, each run once per round: the raw loop alone, N raw loops at
// once, and each fleet (a trainer round through the SDK). A path's round yields its rollouts/s
// and what it cost in CPU, per rollout, in each process that took part.
import type { FlowfleetClient, RoundCommon } from '@flowfleet/client';
import type { Redis } from 'ioredis';
import type { BenchChild } from './child-process.js';
import { processesCpuMs } from './process-cpu.js';
import type { ProfileWindow } from './profile-split.js';
import type { RawLoop } from './raw-loop-client.js';
import { costPerJob, sampleCost } from './redis-stats.js';
import { steadyRate, trainerRound, type Round, type TrainerPolling } from './trainer-round.js';

/** One round of one path. */
export interface RoundSample {
  readonly rolloutsPerSec: number;
  /** From the server's finish times (fleets only). */
  readonly steadyRolloutsPerSec?: number;
  /** The raw processes' or the workers' CPU. */
  readonly cpuMsPerRollout: number;
  /** This process: the coordinator and the trainer's SDK calls (fleets only). */
  readonly coordinatorCpuMsPerRollout?: number;
  readonly redisCpuMsPerRollout?: number;
  readonly redisCommandsPerRollout?: number;
  /** Fleets: a job's time by the server's timestamps and the summaries (medians, ms). */
  readonly timeline?: JobTimeline;
  /** Where the round's rollouts ran one after another (µs, CLOCK_MONOTONIC). */
  readonly window: ProfileWindow;
}

/** Where a fleet job's time goes, from timestamps (ms, medians over a round's jobs). */
export interface JobTimeline {
  /** BullMQ processedOn → finishedOn. */
  readonly jobMs: number;
  /** `runRollout` on the worker (the summary's totalMs). */
  readonly rolloutMs: number;
  /** In the job, outside runRollout: validation, result encoding, upload, completion. */
  readonly jobOutsideRolloutMs: number;
  /** A worker's finishedOn → its next job's processedOn. */
  readonly betweenJobsMs: number;
  /** First enqueue → first job started, and last job finished → last result read. */
  readonly fillMs: number;
  readonly drainMs: number;
}

function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function timelineOf(round: Round): JobTimeline {
  const { jobs } = round;
  const between: number[] = [];
  for (const worker of new Set(jobs.map((job) => job.worker))) {
    const mine = jobs
      .filter((job) => job.worker === worker)
      .sort((a, b) => a.startedAt - b.startedAt);
    for (let i = 1; i < mine.length; i++)
      between.push(mine[i]!.startedAt - mine[i - 1]!.finishedAt);
  }
  return {
    jobMs: medianOf(jobs.map((job) => job.finishedAt - job.startedAt)),
    rolloutMs: medianOf(jobs.map((job) => job.rolloutMs)),
    jobOutsideRolloutMs: medianOf(
      jobs.map((job) => job.finishedAt - job.startedAt - job.rolloutMs),
    ),
    betweenJobsMs: medianOf(between),
    fillMs: Math.min(...jobs.map((job) => job.startedAt)) - round.startedAt,
    drainMs:
      Math.max(...jobs.map((job) => job.readAt)) - Math.max(...jobs.map((job) => job.finishedAt)),
  };
}

/** A compared path. */
export interface BenchPath {
  readonly name: string;
  /** Workers (or raw processes) in parallel. */
  readonly n: number;
  round(): Promise<RoundSample>;
}

const monoUs = () => Number(process.hrtime.bigint() / 1000n);

/** `raws` raw-loop processes running `perProcess` rollouts each, at once. */
export function rawPath(name: string, raws: readonly RawLoop[], perProcess: number): BenchPath {
  return {
    name,
    n: raws.length,
    async round() {
      const from = monoUs();
      const started = performance.now();
      const replies = await Promise.all(raws.map((raw) => raw.run(perProcess)));
      const wallMs = performance.now() - started;
      const rollouts = raws.length * perProcess;
      // One process: its own timed rollouts (no IPC in them); several: the wall of all.
      const busyMs =
        raws.length === 1 ? replies[0]!.samples.reduce((sum, s) => sum + s.ms, 0) : wallMs;
      return {
        rolloutsPerSec: (rollouts * 1000) / busyMs,
        cpuMsPerRollout: replies.reduce((sum, r) => sum + r.cpuUs, 0) / 1000 / rollouts,
        window: {
          from,
          to: monoUs(),
          rollouts: perProcess,
          ...(raws.length === 1 ? { ditRuns: replies[0]!.ditRuns } : {}),
        },
      };
    },
  };
}

/** What a fleet path needs. */
export interface FleetPathOptions {
  readonly name: string;
  readonly client: FlowfleetClient;
  readonly workers: readonly BenchChild[];
  readonly perWorker: number;
  readonly group: { readonly prompt: string; readonly seeds: readonly number[] };
  readonly common: RoundCommon;
  readonly polling: TrainerPolling;
  /** A connection for INFO. */
  readonly stats: Redis;
}

/** A trainer round of `perWorker` rollouts per worker through the SDK. */
export function fleetPath(options: FleetPathOptions): BenchPath {
  const { workers, perWorker } = options;
  const pids = workers.map((w) => w.pid);
  return {
    name: options.name,
    n: workers.length,
    async round() {
      const count = workers.length * perWorker;
      const before = await sampleCost(options.stats);
      const cpu = processesCpuMs(pids);
      const from = monoUs();
      const round = await trainerRound(
        options.client,
        count,
        options.group,
        options.common,
        options.polling,
      );
      const to = monoUs();
      const workerCpu = processesCpuMs(pids) - cpu;
      const cost = costPerJob(before, await sampleCost(options.stats), count);
      return {
        rolloutsPerSec: (count * 1000) / round.wallMs,
        steadyRolloutsPerSec: steadyRate(round, workers.length),
        cpuMsPerRollout: workerCpu / count,
        coordinatorCpuMsPerRollout: cost.nodeCpuUsPerJob / 1000,
        redisCpuMsPerRollout: cost.redisCpuUsPerJob / 1000,
        redisCommandsPerRollout: cost.redisCommandsPerJob,
        timeline: timelineOf(round),
        window: {
          from,
          to,
          rollouts: count,
          // Epoch ms → this clock, through the round's start read on both.
          jobs: [...round.jobs]
            .sort((a, b) => a.startedAt - b.startedAt)
            .map((job) => ({
              from: from + (job.startedAt - round.startedAt) * 1000,
              to: from + (job.finishedAt - round.startedAt) * 1000,
            })),
        },
      };
    },
  };
}

/** Runs every path once per round, in an order rotating by round; samples by path name. */
export async function runRounds(
  paths: readonly BenchPath[],
  rounds: number,
  onRound: (round: number) => void = () => undefined,
): Promise<Map<string, RoundSample[]>> {
  const samples = new Map(paths.map((path) => [path.name, [] as RoundSample[]]));
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < paths.length; i++) {
      const path = paths[(i + r) % paths.length]!;
      samples.get(path.name)!.push(await path.round());
    }
    onRound(r);
  }
  return samples;
}
