import {
  manifestSatisfies,
  type FleetWorker,
  type LaneCapacity,
  type LaneSpec,
  type ManifestRow,
  type Matrix,
  type WorkerManifest,
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

/** The matrix cells one manifest declares, with their ids: derived once per manifest object. */
const cellsByManifest = new WeakMap<
  WorkerManifest,
  readonly {
    readonly id: string;
    readonly cell: Omit<MatrixCell, 'liveWorkers'>;
    readonly available: boolean;
  }[]
>();

function declaredCells(manifest: WorkerManifest) {
  let cells = cellsByManifest.get(manifest);
  if (cells === undefined) {
    const rows = [
      ...manifest.kernels.map((row) => ['kernel', row] as const),
      ...manifest.components.map((row) => ['component', row] as const),
    ];
    cells = rows.map(([registry, row]) => {
      const cell = cellOf(registry, row);
      const id = JSON.stringify([cell.registry, cell.name, cell.device, cell.arch, cell.variant]);
      return { id, cell, available: row.available };
    });
    cellsByManifest.set(manifest, cells);
  }
  return cells;
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
    for (const { id, cell, available } of declaredCells(worker.manifest)) {
      let entry = cells.get(id);
      if (entry === undefined) {
        entry = { cell, workers: new Set() };
        cells.set(id, entry);
      }
      if (available) entry.workers.add(worker.workerId);
    }
  }
  return [...cells.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, entry]) => ({ ...entry.cell, liveWorkers: entry.workers.size }));
}

/**
 * What `manifestSatisfies` reads of a manifest (models, platform, kernel cells) as one string:
 * workers with equal keys satisfy exactly the same lanes. Derived once per manifest object.
 */
const capabilityKeys = new WeakMap<WorkerManifest, string>();

function capabilityKey(manifest: WorkerManifest): string {
  let key = capabilityKeys.get(manifest);
  if (key === undefined) {
    const { device, arch, cpuArch } = manifest.platform;
    const kernels = manifest.kernels.map((row) => [row.key, row.available, row.reason]);
    key = JSON.stringify([manifest.models, device, arch, cpuArch, kernels]);
    capabilityKeys.set(manifest, key);
  }
  return key;
}

/**
 * Live workers (in order) with the index of their capability group, and one manifest per group:
 * each group is judged against a lane once.
 */
function capabilityGroups(workers: readonly WorkerView[]) {
  const index = new Map<string, number>();
  const representatives: WorkerManifest[] = [];
  const live: WorkerView[] = [];
  const groupOf: number[] = [];
  for (const worker of workers) {
    if (!worker.alive) continue;
    const key = capabilityKey(worker.manifest);
    let group = index.get(key);
    if (group === undefined) {
      group = representatives.length;
      index.set(key, group);
      representatives.push(worker.manifest);
    }
    live.push(worker);
    groupOf.push(group);
  }
  return { live, groupOf, representatives };
}

/** Joins lane records with their queue counts and the live workers that satisfy them. */
export function laneCapacities(
  lanes: readonly LaneSpec[],
  counts: ReadonlyMap<string, LaneCounts>,
  workers: readonly WorkerView[],
): LaneCapacity[] {
  const { live, groupOf, representatives } = capabilityGroups(workers);
  return lanes.map((spec) => {
    const ok = representatives.map((manifest) => manifestSatisfies(manifest, spec.requirements).ok);
    const eligible = live.filter((_, i) => ok[groupOf[i]!]);
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
