import type { ClassScaling, Fleet, LaneCapacity, Matrix, WeightReport } from '@flowfleet/client';
import { renderTable, type Cell } from './table.js';

/** `dit=1 text_encoder=0` */
export function weightsText(weights: Readonly<Record<string, number>>): string {
  const entries = Object.entries(weights).sort(([a], [b]) => a.localeCompare(b));
  return entries.length === 0 ? '-' : entries.map(([c, v]) => `${c}=${v}`).join(' ');
}

function ageText(at: string | null, now: number): string {
  if (at === null) return '-';
  const seconds = Math.max(0, (now - Date.parse(at)) / 1_000);
  return `${seconds.toFixed(1)} s ago`;
}

/** The workers of `/v1/fleet`: state, platform, load, weights, lanes, last heartbeat. */
export function workersTable(fleet: Fleet, now = Date.now()): string[] {
  const rows = [...fleet.workers]
    .sort((a, b) => Number(b.alive) - Number(a.alive) || a.workerId.localeCompare(b.workerId))
    .map((w) => [
      w.workerId,
      w.alive ? 'live' : 'dead',
      w.platform.device,
      w.platform.arch,
      `${w.activeJobs}/${w.concurrency}`,
      weightsText(w.weights),
      w.lanes.length,
      `${w.kernels.available}/${w.kernels.declared}`,
      ageText(w.lastHeartbeatAt, now),
      `${w.host}:${w.pid}`,
    ]);
  return renderTable(
    [
      'worker',
      'state',
      'device',
      'arch',
      'jobs',
      'weights',
      'lanes',
      'kernels',
      'heartbeat',
      'host:pid',
    ],
    rows,
  );
}

/** A matrix column: device, then `/arch` for kernels, then `:variant` when not the default. */
function columnOf(cell: Matrix['cells'][number]): string {
  const arch = cell.arch === undefined ? '' : `/${cell.arch}`;
  const variant = cell.variant === 'default' ? '' : `:${cell.variant}`;
  return `${cell.device}${arch}${variant}`;
}

/**
 * The capability matrix as a grid: one row per op (kernel) or component kind, one column per
 * (device, arch, variant) declared anywhere; a cell is the number of live workers that have it
 * available, `-` where nobody declares it.
 */
export function matrixTable(matrix: Matrix): string[] {
  const columns = [...new Set(matrix.cells.map(columnOf))].sort(
    (a, b) => deviceRank(a) - deviceRank(b) || a.localeCompare(b),
  );
  const rows = new Map<string, Map<string, number>>();
  for (const cell of matrix.cells) {
    const row = `${cell.registry === 'kernel' ? 'op' : 'component'} ${cell.name}`;
    const counts = rows.get(row) ?? new Map<string, number>();
    counts.set(columnOf(cell), (counts.get(columnOf(cell)) ?? 0) + cell.liveWorkers);
    rows.set(row, counts);
  }
  const body: Cell[][] = [...rows.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([row, counts]) => [row, ...columns.map((column) => counts.get(column) ?? '-')]);
  return renderTable(['live workers', ...columns], body, {
    align: ['left', ...columns.map(() => 'right' as const)],
  });
}

function deviceRank(column: string): number {
  const device = column.split(/[/:]/)[0] ?? '';
  return ['cpu', 'cuda', 'webgpu'].indexOf(device) + 1 || 9;
}

/** The lanes with their requirements, queue counts and capacity. */
export function lanesTable(lanes: readonly LaneCapacity[]): string[] {
  const rows = lanes.map((lane) => [
    lane.lane,
    lane.requirements.model,
    lane.requirements.ops.join(','),
    lane.requirements.devices.join(','),
    minArchText(lane.requirements.minArch),
    lane.counts.waiting + lane.counts.prioritized + lane.counts.delayed,
    lane.counts.active,
    lane.counts.completed,
    lane.counts.failed,
    lane.eligibleWorkers,
    lane.capacity,
  ]);
  return renderTable(
    [
      'lane',
      'model',
      'ops',
      'devices',
      'min arch',
      'waiting',
      'active',
      'done',
      'failed',
      'workers',
      'capacity',
    ],
    rows,
  );
}

function minArchText(minArch: Readonly<Record<string, string | undefined>>): string {
  const entries = Object.entries(minArch).filter(([, arch]) => arch !== undefined);
  return entries.length === 0
    ? 'any'
    : entries.map(([device, arch]) => `${device}>=${arch}`).join(' ');
}

/**
 * Who holds a weight version: one row per worker of the fleet (and any other worker that acked),
 * with its ack, the version it holds now, and the reason of a refusal.
 */
export function acksTable(
  report: WeightReport,
  version: number,
  fleet: Fleet,
  extra: (workerId: string) => readonly Cell[] = () => [],
  extraHeaders: readonly string[] = [],
): string[] {
  const entry = report.versions[String(version)];
  const ids = new Set([...fleet.workers.map((w) => w.workerId), ...Object.keys(entry?.acks ?? {})]);
  const rows = [...ids].sort().map((id) => {
    const worker = fleet.workers.find((w) => w.workerId === id);
    return [
      id,
      worker === undefined ? '?' : worker.alive ? 'live' : 'dead',
      entry?.acks[id] ?? 'pending',
      worker?.weights[report.component] ?? '-',
      ...extra(id),
      entry?.reasons[id] ?? '',
    ];
  });
  return renderTable(
    ['worker', 'state', `v${version} ack`, `holds ${report.component}`, ...extraHeaders, 'reason'],
    rows,
  );
}

/** The classes of `/v1/scaling`: workers, load, backlog and the replicas the rule asks for. */
export function scalingTable(classes: readonly ClassScaling[]): string[] {
  const rows = classes.map((c) => [
    c.deviceClass,
    c.source,
    c.workers,
    `${c.busy}/${c.capacity}`,
    c.exclusiveBacklog,
    `${c.sharedBacklog} (${Number(c.sharedAssigned.toFixed(2))})`,
    c.jobsPerReplica,
    c.desiredReplicas,
    `${c.minReplicas}..${c.maxReplicas}`,
  ]);
  return renderTable(
    [
      'class',
      'known',
      'workers',
      'busy',
      'exclusive',
      'shared (counted)',
      'jobs/replica',
      'desired',
      'bounds',
    ],
    rows,
  );
}

/**
 * Where a worker's bytes of a version came from (peer fan-out): `coordinator`, a peer's id, or
 * both with their share, e.g. `w1 2.5 MB + coordinator 0.3 MB`; and how often it fell back.
 */
export function sourceCells(report: WeightReport, version: number, workerId: string): Cell[] {
  const entry = report.versions[String(version)];
  const sources = Object.entries(entry?.sources[workerId] ?? {}).filter(([, bytes]) => bytes > 0);
  const from =
    sources.length === 1
      ? sources[0]![0]
      : sources.map(([name, bytes]) => `${name} ${(bytes / 1e6).toFixed(1)} MB`).join(' + ');
  return [from === '' ? '-' : from, entry?.fallbacks[workerId] ?? 0];
}
