// bench:scale's figures: one phase per (Redis mode, fleet size), the printed table, and the
// results file's `figures` keyed like `matrixP99Ms.w10000` (single Redis) and
// `cluster.matrixP99Ms.w10000`.
import { printTable, round } from './bench-report.js';
import type { ClusterLoad, EnqueueFigures, QueryFigures } from './scale-measure.js';

/** What one phase measured. */
export interface ScalePhase {
  readonly mode: string;
  readonly simulated: number;
  readonly loadAvg: readonly number[];
  /** The workers this phase added: from the first spawn until GET /v1/fleet counts them live. */
  readonly registration: {
    readonly added: number;
    readonly seconds: number;
    readonly perSec: number;
  };
  /** Heartbeats (and idle traffic) only. */
  readonly redis: ClusterLoad;
  readonly simCpuPercentOfOneCore: number;
  readonly matrix: QueryFigures;
  readonly fleet: QueryFigures;
  readonly enqueue: EnqueueFigures;
  /** Held jobs enqueued round-robin over the 32 lanes: where their commands went. */
  readonly laneBurst: {
    readonly jobs: number;
    readonly jobsPerSec: number;
    readonly redis: ClusterLoad;
  };
  readonly coordinator: {
    readonly rssMb: number;
    readonly heapUsedMb: number;
    readonly cpuMsPerMatrixQuery: number;
  };
}

/** Prints one phase's line as it finishes. */
export function printPhase(p: ScalePhase): void {
  console.log(
    `  ${p.mode} w${p.simulated}: registered ${p.registration.added} in ${p.registration.seconds} s; matrix p50 ${p.matrix.p50Ms} p99 ${p.matrix.p99Ms} ms (${p.matrix.responseKb} kB); ` +
      `fleet p50 ${p.fleet.p50Ms} p99 ${p.fleet.p99Ms} ms (${p.fleet.responseKb} kB); ` +
      `enqueue→start p50 ${p.enqueue.enqueueToStart.p50Ms} p99 ${p.enqueue.enqueueToStart.p99Ms} ms; ` +
      `heartbeat load ${p.redis.commandsPerSec} cmd/s ${p.redis.cpuPercentOfOneCore}% core; ` +
      `lane burst shares ${p.laneBurst.redis.perMaster.map((m) => m.commandShare).join('/')}; ` +
      `coordinator RSS ${p.coordinator.rssMb} MB; load ${p.loadAvg.join(' ')}`,
  );
}

/** The table of every phase. */
export function printPhases(phases: readonly ScalePhase[]): void {
  printTable(
    phases.map((p) => ({
      mode: p.mode,
      workers: p.simulated,
      'reg s': p.registration.seconds,
      'matrix p50/p99 ms': `${p.matrix.p50Ms} / ${p.matrix.p99Ms}`,
      'fleet p50/p99 ms': `${p.fleet.p50Ms} / ${p.fleet.p99Ms}`,
      'enq→start p50/p99 ms': `${p.enqueue.enqueueToStart.p50Ms} / ${p.enqueue.enqueueToStart.p99Ms}`,
      'beat cmd/s': p.redis.commandsPerSec,
      'redis %core': p.redis.cpuPercentOfOneCore,
      'redis MB': p.redis.usedMemoryMb,
      'coord RSS MB': p.coordinator.rssMb,
      'burst split': p.laneBurst.redis.perMaster.map((m) => m.commandShare).join('/'),
      load: p.loadAvg[0] ?? 0,
    })),
  );
}

/** The headline figures of one mode's phases, keyed `w<size>`, with ratios to its baseline. */
export function modeFigures(phases: readonly ScalePhase[]): Record<string, unknown> {
  const by = <T>(pick: (phase: ScalePhase) => T) =>
    Object.fromEntries(phases.map((phase) => [`w${phase.simulated}`, pick(phase)]));
  const base = phases[0]!;
  const top = phases.at(-1)!;
  return {
    registrationSeconds: by((p) => p.registration.seconds),
    matrixP50Ms: by((p) => p.matrix.p50Ms),
    matrixP99Ms: by((p) => p.matrix.p99Ms),
    fleetP50Ms: by((p) => p.fleet.p50Ms),
    fleetP99Ms: by((p) => p.fleet.p99Ms),
    enqueueToStartP50Ms: by((p) => p.enqueue.enqueueToStart.p50Ms),
    enqueueToStartP99Ms: by((p) => p.enqueue.enqueueToStart.p99Ms),
    heartbeatRedisCommandsPerSec: by((p) => p.redis.commandsPerSec),
    heartbeatRedisCpuPercentOfOneCore: by((p) => p.redis.cpuPercentOfOneCore),
    redisUsedMemoryMb: by((p) => p.redis.usedMemoryMb),
    coordinatorRssMb: by((p) => p.coordinator.rssMb),
    coordinatorCpuMsPerMatrixQuery: by((p) => p.coordinator.cpuMsPerMatrixQuery),
    matrixResponseKb: by((p) => p.matrix.responseKb),
    fleetResponseKb: by((p) => p.fleet.responseKb),
    loadAverage1m: by((p) => p.loadAvg[0] ?? 0),
    laneBurstCommandShareByMaster: by((p) =>
      Object.fromEntries(p.laneBurst.redis.perMaster.map((m) => [m.node, m.commandShare])),
    ),
    heartbeatCommandShareByMaster: by((p) =>
      Object.fromEntries(p.redis.perMaster.map((m) => [m.node, m.commandShare])),
    ),
    ratiosTopVsBaseline: {
      matrixP99: round(top.matrix.p99Ms / base.matrix.p99Ms, 2),
      fleetP99: round(top.fleet.p99Ms / base.fleet.p99Ms, 2),
      enqueueToStartP50: round(
        top.enqueue.enqueueToStart.p50Ms / Math.max(1, base.enqueue.enqueueToStart.p50Ms),
        2,
      ),
      coordinatorRss: round(top.coordinator.rssMb / base.coordinator.rssMb, 2),
    },
  };
}
