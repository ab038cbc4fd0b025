import { readFile } from 'node:fs/promises';
import { readSafetensors, type FlowfleetClient, type SyncProgress } from '@flowfleet/client';
import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import type { Command } from 'commander';
import { integerIn } from '../cli-args.js';
import { line, type CliIo } from '../cli-io.js';
import { EXIT_CODES } from '../exit-codes.js';
import { acksTable } from '../format/fleet-tables.js';
import { formatBytes, formatMs } from '../format/numbers.js';
import { remoteClient, withRemoteOptions, type RemoteOptions } from '../remote-client.js';

/** Options of `flowfleet sync`. */
export interface SyncFlags extends RemoteOptions {
  readonly version?: number;
  readonly minWorkers?: number;
  readonly wait: boolean;
  readonly timeout: number;
}

/** Adds `sync` to the program. */
export function syncCommand(program: Command): Command {
  return withRemoteOptions(
    program
      .command('sync')
      .description(
        'upload a weights file and make it the next version of a component on every worker',
      )
      .argument('<component>', 'component id, e.g. dit')
      .argument('<file>', 'weights .safetensors file')
      .option(
        '--version <n>',
        'the version (default: current + 1)',
        integerIn(1, Number.MAX_SAFE_INTEGER),
      )
      .option(
        '--min-workers <n>',
        'wait for this many live workers (default: every live worker)',
        integerIn(1, 100_000),
      )
      .option('--no-wait', 'return once the sync is recorded, without waiting for acks')
      .option(
        '--timeout <ms>',
        'give up waiting for acks after this long',
        integerIn(1, 3_600_000),
        120_000,
      ),
  );
}

/**
 * Reads a weights file and checks that it is safetensors (before uploading anything).
 * @throws FlowfleetError CLI_FILE_UNREADABLE
 */
export async function readWeightsFile(path: string): Promise<Uint8Array> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (cause) {
    throw new FlowfleetError(
      'CLI_FILE_UNREADABLE',
      `cannot read ${path}: ${(cause as Error).message}`,
      {
        details: { path },
        cause,
      },
    );
  }
  try {
    readSafetensors(bytes);
  } catch (cause) {
    if (!isFlowfleetError(cause)) throw cause;
    throw new FlowfleetError(
      'CLI_FILE_UNREADABLE',
      `${path} is not a safetensors file: ${cause.message}`,
      {
        details: { path },
        cause,
      },
    );
  }
  return bytes;
}

/** Uploads `bytes` and syncs them as `version` (default current + 1) of `component`. */
export async function pushWeights(
  client: FlowfleetClient,
  component: string,
  bytes: Uint8Array,
  version: number | undefined,
  signal: AbortSignal,
) {
  const next =
    version ?? ((await client.weights(component, { limit: 1 }, { signal })).current ?? 0) + 1;
  const blob = await client.uploadBlob(bytes, { signal });
  const sync = await client.syncWeights(component, next, blob.sha256, { signal });
  return { blob, sync };
}

/**
 * `flowfleet sync <component> <file>`: upload, sync, and wait until every live worker (or
 * `--min-workers`) acked the version; prints each worker's ack.
 * @returns 0 when the target acked; a refused or failed version throws CLIENT_SYNC_FAILED (1)
 */
export async function runSync(
  flags: SyncFlags,
  component: string,
  file: string,
  io: CliIo,
): Promise<number> {
  const json = flags.json === true;
  const client = remoteClient(flags, io);
  const bytes = await readWeightsFile(file);
  const started = performance.now();
  const { blob, sync } = await pushWeights(client, component, bytes, flags.version, io.signal);
  if (!json) {
    line(
      io.out,
      `uploaded ${file}: ${formatBytes(blob.sizeBytes)}, sha256 ${blob.sha256.slice(0, 16)}…`,
    );
    line(io.out, `synced ${component} v${sync.version} (previous ${sync.previous ?? 'none'})`);
  }
  let progress: SyncProgress | undefined;
  if (flags.wait) {
    let lastOk = -1;
    progress = await client.waitForSync(
      component,
      sync.version,
      flags.minWorkers === undefined ? { all: true } : { minWorkers: flags.minWorkers },
      {
        timeoutMs: flags.timeout,
        signal: io.signal,
        onUpdate: (update) => {
          if (json || update.okWorkers.length === lastOk) return;
          lastOk = update.okWorkers.length;
          line(
            io.out,
            `  ${update.okWorkers.length}/${update.liveWorkers.length} live workers hold v${sync.version}`,
          );
        },
      },
    );
  }
  if (json) {
    line(io.out, JSON.stringify({ blob, sync, ...(progress === undefined ? {} : { progress }) }));
    return EXIT_CODES.ok;
  }
  if (progress !== undefined) {
    const [report, fleet] = await Promise.all([
      client.weights(component, {}, { signal: io.signal }),
      client.fleet({ signal: io.signal }),
    ]);
    line(
      io.out,
      `v${sync.version} acked ok by ${progress.okWorkers.length}/${progress.liveWorkers.length} live workers in ${formatMs(performance.now() - started)}`,
    );
    for (const text of acksTable(report, sync.version, fleet)) line(io.out, text);
  }
  return EXIT_CODES.ok;
}
