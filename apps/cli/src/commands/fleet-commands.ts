import type { Matrix } from '@flowfleet/client';
import { line, type CliIo } from '../cli-io.js';
import { EXIT_CODES } from '../exit-codes.js';
import { lanesTable, matrixTable, workersTable } from '../format/fleet-tables.js';
import { remoteClient, type RemoteOptions } from '../remote-client.js';

/** `flowfleet workers`: every registered worker, live first. */
export async function runWorkers(options: RemoteOptions, io: CliIo): Promise<number> {
  const fleet = await remoteClient(options, io).fleet({ signal: io.signal });
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

/** The human matrix: the grid, then the lanes. */
export function matrixSection(matrix: Matrix): string[] {
  const lines = [
    `capability matrix (${matrix.liveWorkers} live workers; - = not declared by any worker)`,
  ];
  lines.push(...matrixTable(matrix));
  lines.push('', `lanes (${matrix.lanes.length})`);
  if (matrix.lanes.length > 0) lines.push(...lanesTable(matrix.lanes));
  else lines.push('  (none yet: a lane appears with the first rollout of its requirements)');
  return lines;
}
