import {
  manifestSatisfies,
  type FleetWorker,
  type LaneCapacity,
  type LaneSpec,
  type ManifestRow,
  type Matrix,
  type Requirements,
  type WorkerManifest,
} from '@flowfleet/protocol';
import { YIELD_EVERY, yieldToEventLoop, type WorkerView } from './fleet-reader.js';
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
    ...(manifest.peerUrl === undefined ? {} : { peerUrl: manifest.peerUrl }),
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

/** Equal keys: the manifests declare the same matrix cells with the same availability. */
const cellKeys = new WeakMap<WorkerManifest, string>();

function cellKey(manifest: WorkerManifest): string {
  let key = cellKeys.get(manifest);
  if (key === undefined) {
    key = JSON.stringify(declaredCells(manifest).map(({ id, available }) => [id, available]));
    cellKeys.set(manifest, key);
  }
  return key;
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

/** Live workers whose manifests satisfy the same lanes: judged against a lane once. */
interface CapabilityGroup {
  readonly manifest: WorkerManifest;
  liveWorkers: number;
  /** The sum of their concurrency. */
  capacity: number;
}

/** How many live workers can serve a lane, and their summed concurrency. */
export interface LaneEligibility {
  readonly eligibleWorkers: number;
  readonly capacity: number;
  /** Index of every satisfying group (into the digest's `groupOf`). */
  readonly groups: ReadonlySet<number>;
}

/**
 * What the views need of one fleet read, derived once per read (the reader shares a read for up
 * to a second, and so every query in that second shares this): live workers by capability group,
 * the matrix cells, and each lane's eligibility as it is first asked for. A query then costs a
 * lookup and its serialisation, not a pass over every worker.
 */
export interface FleetDigest {
  readonly liveWorkers: number;
  /** Shared by every query of the read: not to be mutated. */
  readonly cells: MatrixCell[];
  /** Per view of the read: its capability group, or -1 for a dead worker. */
  readonly groupOf: readonly number[];
  /** Lane → eligibility (filled on first use; a lane's requirements never change). */
  eligibility(lane: string, requirements: Requirements): LaneEligibility;
}

const digests = new WeakMap<readonly WorkerView[], FleetDigest>();

/** The digest of one read (`workers` as the reader answered it: the same array, the same digest). */
export function fleetDigest(workers: readonly WorkerView[]): FleetDigest {
  let digest = digests.get(workers);
  if (digest === undefined) {
    digest = digestOf(workers);
    digests.set(workers, digest);
  }
  return digest;
}

/**
 * Derives the digest of a read in slices, yielding to the event loop between them, so a large
 * fleet's read does not stall the requests that arrive meanwhile (the reader calls it before it
 * answers the read).
 */
export async function prepareFleetDigest(workers: readonly WorkerView[]): Promise<void> {
  if (!digests.has(workers)) digests.set(workers, await digestOf(workers, yieldToEventLoop));
}

function digestOf(workers: readonly WorkerView[]): FleetDigest;
function digestOf(workers: readonly WorkerView[], pause: () => Promise<void>): Promise<FleetDigest>;
function digestOf(
  workers: readonly WorkerView[],
  pause?: () => Promise<void>,
): FleetDigest | Promise<FleetDigest> {
  const groupIndex = new Map<string, number>();
  const groups: CapabilityGroup[] = [];
  const cellGroups = new Map<string, { manifest: WorkerManifest; liveWorkers: number }>();
  const groupOf: number[] = [];
  let liveWorkers = 0;
  const add = ({ alive, manifest }: WorkerView): void => {
    if (!alive) {
      groupOf.push(-1);
      return;
    }
    liveWorkers += 1;
    const key = capabilityKey(manifest);
    let index = groupIndex.get(key);
    if (index === undefined) {
      index = groups.length;
      groupIndex.set(key, index);
      groups.push({ manifest, liveWorkers: 0, capacity: 0 });
    }
    const group = groups[index]!;
    group.liveWorkers += 1;
    group.capacity += manifest.concurrency;
    groupOf.push(index);
    const cells = cellKey(manifest);
    const cellGroup = cellGroups.get(cells);
    if (cellGroup === undefined) cellGroups.set(cells, { manifest, liveWorkers: 1 });
    else cellGroup.liveWorkers += 1;
  };
  const finish = (): FleetDigest => {
    const eligibility = new Map<string, LaneEligibility>();
    return {
      liveWorkers,
      cells: matrixCells([...cellGroups.values()]),
      groupOf,
      eligibility(lane, requirements) {
        let known = eligibility.get(lane);
        if (known === undefined) {
          const ok = new Set<number>();
          let eligibleWorkers = 0;
          let capacity = 0;
          groups.forEach((group, index) => {
            if (!manifestSatisfies(group.manifest, requirements).ok) return;
            ok.add(index);
            eligibleWorkers += group.liveWorkers;
            capacity += group.capacity;
          });
          known = { eligibleWorkers, capacity, groups: ok };
          eligibility.set(lane, known);
        }
        return known;
      },
    };
  };
  if (pause === undefined) {
    workers.forEach(add);
    return finish();
  }
  return (async () => {
    for (let i = 0; i < workers.length; i += 1) {
      if (i > 0 && i % YIELD_EVERY === 0) await pause();
      add(workers[i]!);
    }
    return finish();
  })();
}

/**
 * For every (op or component kind) × (device, arch, variant) that any live worker declares: how
 * many live workers have it available, from groups of workers that declare the same cells.
 * Sorted for stable output; a cell declared only as unavailable shows 0.
 */
function matrixCells(
  groups: readonly { manifest: WorkerManifest; liveWorkers: number }[],
): MatrixCell[] {
  const cells = new Map<string, { cell: Omit<MatrixCell, 'liveWorkers'>; liveWorkers: number }>();
  for (const { manifest, liveWorkers } of groups) {
    // A manifest may list a cell twice (a kernel and a component of the same key never collide:
    // the registry is part of the id); its workers count once per cell.
    const counted = new Set<string>();
    for (const { id, cell, available } of declaredCells(manifest)) {
      let entry = cells.get(id);
      if (entry === undefined) {
        entry = { cell, liveWorkers: 0 };
        cells.set(id, entry);
      }
      if (available && !counted.has(id)) {
        counted.add(id);
        entry.liveWorkers += liveWorkers;
      }
    }
  }
  return [...cells.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, entry]) => ({ ...entry.cell, liveWorkers: entry.liveWorkers }));
}

/** The matrix cells of one read (see {@link fleetDigest}). */
export function capabilityMatrix(workers: readonly WorkerView[]): MatrixCell[] {
  return fleetDigest(workers).cells;
}

/** The live workers of one read that can serve a lane (for `GET /v1/fleet?lane=`). */
export function eligibleWorkerViews(
  workers: readonly WorkerView[],
  lane: string,
  requirements: Requirements,
): WorkerView[] {
  const digest = fleetDigest(workers);
  const { groups } = digest.eligibility(lane, requirements);
  return workers.filter((_, i) => groups.has(digest.groupOf[i]!));
}

const NO_COUNTS: LaneCounts = {
  waiting: 0,
  delayed: 0,
  prioritized: 0,
  active: 0,
  completed: 0,
  failed: 0,
};

/** Joins lane records with their queue counts and how many live workers satisfy them. */
export function laneCapacities(
  lanes: readonly LaneSpec[],
  counts: ReadonlyMap<string, LaneCounts>,
  workers: readonly WorkerView[],
): LaneCapacity[] {
  const digest = fleetDigest(workers);
  return lanes.map((spec) => {
    const { eligibleWorkers, capacity } = digest.eligibility(spec.lane, spec.requirements);
    const laneCounts = counts.get(spec.lane) ?? NO_COUNTS;
    return {
      lane: spec.lane,
      requirements: spec.requirements,
      createdAt: spec.createdAt,
      backlog: laneCounts.waiting + laneCounts.delayed + laneCounts.prioritized,
      counts: laneCounts,
      eligibleWorkers,
      capacity,
    };
  });
}
