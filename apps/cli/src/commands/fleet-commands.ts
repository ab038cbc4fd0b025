import type { Matrix, Scaling } from '@flowfleet/client';
import { line, type CliIo } from '../cli-io.js';
import { EXIT_CODES } from '../exit-codes.js';
import { lanesTable, matrixTable, scalingTable, workersTable } from '../format/fleet-tables.js';
import { remoteClient, type RemoteOptions } from '../remote-client.js';

/** Flags of `flowfleet workers`. */
export interface WorkersFlags extends RemoteOptions {
  /** Only the live workers that can serve this lane. */
  readonly lane?: string;
}

/** `flowfleet workers [--lane <lane>]`: every registered worker, live first (or a lane's). */
export async function runWorkers(options: WorkersFlags, io: CliIo): Promise<number> {
  const client = remoteClient(options, io);
  const call = { signal: io.signal };
  const fleet =
    options.lane === undefined
      ? await client.fleet(call)
      : await client.laneWorkers(options.lane, call);
  if (options.json === true) {
    line(io.out, JSON.stringify(fleet));
    return EXIT_CODES.ok;
  }
  line(io.out, `${fleet.live} live, ${fleet.dead} dead`);
  if (fleet.workers.length > 0) for (const text of workersTable(fleet)) line(io.out, text);
  return EXIT_CODES.ok;
}

/** `flowfleet matrix`: live workers per (op or component) × (device, arch, variant), and lanes. */
export async function runMatrix(options: RemoteOptions, io: CliIo): Promise<number> {
  const matrix = await remoteClient(options, io).matrix({ signal: io.signal });
  if (options.json === true) {
    line(io.out, JSON.stringify(matrix));
    return EXIT_CODES.ok;
  }
  for (const text of matrixSection(matrix)) line(io.out, text);
  return EXIT_CODES.ok;
}

/** `flowfleet lanes`: every recorded lane with its backlog and the live capacity that serves it. */
export async function runLanes(options: RemoteOptions, io: CliIo): Promise<number> {
  const { lanes } = await remoteClient(options, io).lanes({ signal: io.signal });
  if (options.json === true) {
    line(io.out, JSON.stringify({ lanes }));
    return EXIT_CODES.ok;
  }
  for (const text of lanesSection(lanes)) line(io.out, text);
  return EXIT_CODES.ok;
}

/** The human lane list (also the end of `matrix`). */
export function lanesSection(lanes: Matrix['lanes']): string[] {
  const lines = [`lanes (${lanes.length})`];
  if (lanes.length > 0) lines.push(...lanesTable(lanes));
  else lines.push('  (none yet: a lane appears with the first rollout of its requirements)');
  return lines;
}

/** The human matrix: the grid, then the lanes. */
export function matrixSection(matrix: Matrix): string[] {
  const lines = [
    `capability matrix (${matrix.liveWorkers} live workers; - = not declared by any worker)`,
  ];
  lines.push(...matrixTable(matrix));
  lines.push('', ...lanesSection(matrix.lanes));
  return lines;
}

/** Flags of `flowfleet scaling`. */
export interface ScalingFlags extends RemoteOptions {
  readonly deviceClass?: string;
}

/** `flowfleet scaling`: backlog, capacity and desired replicas per device class. */
export async function runScaling(options: ScalingFlags, io: CliIo): Promise<number> {
  const scaling = await remoteClient(options, io).scaling(
    options.deviceClass === undefined ? {} : { deviceClass: options.deviceClass },
    { signal: io.signal },
  );
  if (options.json === true) {
    line(io.out, JSON.stringify(scaling));
    return EXIT_CODES.ok;
  }
  for (const text of scalingSection(scaling)) line(io.out, text);
  return EXIT_CODES.ok;
}

/** The human scaling view: one row per class, then the rule. */
export function scalingSection(scaling: Scaling): string[] {
  const lines = [`device classes (${scaling.classes.length})`];
  if (scaling.classes.length > 0) lines.push(...scalingTable(scaling.classes));
  else
    lines.push(
      '  (none yet: a class appears with its first worker or in FLOWFLEET_SCALING_CLASSES)',
    );
  if (scaling.unservedBacklog > 0) {
    lines.push(`${scaling.unservedBacklog} jobs wait on lanes no known class can serve`);
  }
  lines.push(`rule: ${scaling.rule}`);
  return lines;
}
