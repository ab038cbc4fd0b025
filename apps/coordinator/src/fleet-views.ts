import {
  manifestSatisfies,
  type FleetWorker,
  type LaneCapacity,
  type LaneSpec,
  type ManifestRow,
  type Matrix,
} from '@flowfleet/protocol';
import type { WorkerView } from './fleet-reader.js';
import type { LaneCounts } from './lane-queues.js';

/** The fleet listing. */
export function summarizeWorkers(workers: readonly WorkerView[]): FleetWorker[] {
  return workers.map(({ workerId, alive, manifest, heartbeat }) => ({
    workerId,
    alive,
    host: manifest.host,
    pid: manifest.pid,
    platform: manifest.platform,
    version: manifest.version,
    startedAt: manifest.startedAt,
    concurrency: manifest.concurrency,
    activeJobs: alive ? (heartbeat?.activeJobs ?? 0) : 0,
    lastHeartbeatAt: alive ? (heartbeat?.at ?? null) : null,
    lanes: alive ? (heartbeat?.lanes ?? []) : [],
    models: manifest.models,
    weights: manifest.weights,
    kernels: {
      available: manifest.kernels.filter((row) => row.available).length,
      declared: manifest.kernels.length,
    },
    components: {
      available: manifest.components.filter((row) => row.available).length,
      declared: manifest.components.length,
    },
  }));
}

/** One cell of the capability matrix: how many live workers have this cell available. */
type MatrixCell = Matrix['cells'][number];

function cellOf(
  registry: MatrixCell['registry'],
  row: ManifestRow,
): Omit<MatrixCell, 'liveWorkers'> {
  const name = (registry === 'kernel' ? row.key['op'] : row.key['kind']) ?? '?';
  return {
    registry,
    name,
    device: row.key['device'] ?? '?',
    ...(registry === 'kernel' ? { arch: row.key['arch'] ?? '?' } : {}),
    variant: row.key['variant'] ?? 'default',
  };
}

/**
 * For every (op or component kind) × (device, arch, variant) that any live worker declares: how
 * many live workers have it available. Sorted for stable output; a cell declared only as
 * unavailable shows 0.
 */
export function capabilityMatrix(workers: readonly WorkerView[]): MatrixCell[] {
  const cells = new Map<string, { cell: Omit<MatrixCell, 'liveWorkers'>; workers: Set<string> }>();
  for (const worker of workers) {
    if (!worker.alive) continue;
    const rows = [
      ...worker.manifest.kernels.map((row) => ['kernel', row] as const),
      ...worker.manifest.components.map((row) => ['component', row] as const),
    ];
    for (const [registry, row] of rows) {
      const cell = cellOf(registry, row);
      const id = JSON.stringify([cell.registry, cell.name, cell.device, cell.arch, cell.variant]);
      let entry = cells.get(id);
      if (entry === undefined) {
        entry = { cell, workers: new Set() };
        cells.set(id, entry);
      }
      if (row.available) entry.workers.add(worker.workerId);
    }
  }
  return [...cells.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, entry]) => ({ ...entry.cell, liveWorkers: entry.workers.size }));
}

/** Joins lane records with their queue counts and the live workers that satisfy them. */
export function laneCapacities(
  lanes: readonly LaneSpec[],
  counts: ReadonlyMap<string, LaneCounts>,
  workers: readonly WorkerView[],
): LaneCapacity[] {
  const live = workers.filter((worker) => worker.alive);
  return lanes.map((spec) => {
    const eligible = live.filter(
      (worker) => manifestSatisfies(worker.manifest, spec.requirements).ok,
    );
    const laneCounts = counts.get(spec.lane) ?? {
      waiting: 0,
      delayed: 0,
      prioritized: 0,
      active: 0,
      completed: 0,
      failed: 0,
    };
    return {
      lane: spec.lane,
      requirements: spec.requirements,
      createdAt: spec.createdAt,
      backlog: laneCounts.waiting + laneCounts.delayed + laneCounts.prioritized,
      counts: laneCounts,
      eligibleWorkers: eligible.map((worker) => worker.workerId),
      capacity: eligible.reduce((sum, worker) => sum + worker.manifest.concurrency, 0),
    };
  });
}
