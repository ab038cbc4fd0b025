import { readFile } from 'node:fs/promises';
import { type FlowfleetClient, type LoraSyncOptions, type SyncProgress } from '@flowfleet/client';
import { openSafetensorsCheckpoint } from '@flowfleet/formats';
import { PeftLoraConfigSchema, parseOrThrow, type PeftLoraConfigJson } from '@flowfleet/protocol';
import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import type { Command } from 'commander';
import { integerIn } from '../cli-args.js';
import { line, type CliIo } from '../cli-io.js';
import { EXIT_CODES } from '../exit-codes.js';
import { acksTable, sourceCells } from '../format/fleet-tables.js';
import { formatBytes, formatMs } from '../format/numbers.js';
import { remoteClient, withRemoteOptions, type RemoteOptions } from '../remote-client.js';
import { fleetAfterSync } from '../fleet-after-sync.js';

/** Options of `flowfleet sync`. */
export interface SyncFlags extends RemoteOptions {
  readonly version?: number;
  readonly minWorkers?: number;
  readonly wait: boolean;
  readonly timeout: number;
  readonly loraBase?: number;
  readonly loraConfig?: string;
  readonly expectLayers?: number;
}

/** Adds `sync` to the program. */
export function syncCommand(program: Command): Command {
  return withRemoteOptions(
    program
      .command('sync')
      .description(
        'upload a checkpoint (a safetensors file, or a directory: one file, or shards and their *.safetensors.index.json) or a LoRA adapter and make it the next version of a component on every worker',
      )
      .argument('<component>', 'component id, e.g. dit')
      .argument('<path>', 'a .safetensors file or a checkpoint directory')
      .option(
        '--lora-base <n>',
        'sync <path> as a LoRA adapter merged into version n',
        integerIn(1, Number.MAX_SAFE_INTEGER),
      )
      .option(
        '--lora-config <file>',
        "the adapter's PEFT adapter_config.json (default: the one beside the adapter)",
      )
      .option(
        '--expect-layers <n>',
        'refuse the adapter unless it binds at least n layers',
        integerIn(1, 1_000_000),
      )
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

/** Uploads `bytes` and syncs them as `version` (default latest synced + 1) of `component`. */
export async function pushWeights(
  client: FlowfleetClient,
  component: string,
  bytes: Uint8Array,
  version: number | undefined,
  signal: AbortSignal,
) {
  const next =
    version ??
    ((await client.weights(component, { limit: 1 }, { signal })).latest?.version ?? 0) + 1;
  const blob = await client.uploadBlob(bytes, { signal });
  const sync = await client.syncWeights(component, next, blob.sha256, { signal });
  return { blob, sync };
}

/**
 * Finds the checkpoint at `path` (before uploading anything).
 * @throws FlowfleetError CLI_FILE_UNREADABLE naming why (formats' reason in the cause)
 */
async function checkCheckpoint(path: string): Promise<void> {
  try {
    await openSafetensorsCheckpoint(path);
  } catch (cause) {
    if (!isFlowfleetError(cause) || !cause.code.startsWith('FMT_')) throw cause;
    throw new FlowfleetError('CLI_FILE_UNREADABLE', `${path}: ${cause.message}`, {
      details: { path, code: cause.code, ...cause.details },
      cause,
    });
  }
}

/** The LoRA part of a push from the flags (none without `--lora-base`). */
async function loraOf(flags: SyncFlags): Promise<LoraSyncOptions | undefined> {
  if (flags.loraBase === undefined) {
    if (flags.loraConfig !== undefined || flags.expectLayers !== undefined) {
      throw new FlowfleetError('CLI_USAGE', '--lora-config and --expect-layers need --lora-base');
    }
    return undefined;
  }
  const config =
    flags.loraConfig === undefined ? undefined : await readLoraConfig(flags.loraConfig);
  return {
    base: flags.loraBase,
    ...(config === undefined ? {} : { config }),
    ...(flags.expectLayers === undefined ? {} : { expectLayers: flags.expectLayers }),
  };
}

/**
 * A PEFT adapter_config.json named on the command line.
 * @throws FlowfleetError CLI_FILE_UNREADABLE (unreadable, not JSON, not a LoRA config)
 */
async function readLoraConfig(path: string): Promise<PeftLoraConfigJson> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, 'utf8')) as unknown;
  } catch (cause) {
    throw new FlowfleetError(
      'CLI_FILE_UNREADABLE',
      `cannot read ${path} as JSON: ${(cause as Error).message}`,
      { details: { path }, cause },
    );
  }
  return parseOrThrow(PeftLoraConfigSchema, value, 'CLI_FILE_UNREADABLE', path);
}

/**
 * `flowfleet sync <component> <path>`: upload a checkpoint (one file, or every shard of a sharded
 * directory) or, with `--lora-base`, an adapter; sync it, and wait until every live worker (or
 * `--min-workers`) acked the version; prints each worker's ack.
 * @returns 0 when the target acked; a refused or failed version throws CLIENT_SYNC_FAILED (1)
 */
export async function runSync(
  flags: SyncFlags,
  component: string,
  path: string,
  io: CliIo,
): Promise<number> {
  const json = flags.json === true;
  const client = remoteClient(flags, io);
  await checkCheckpoint(path);
  const lora = await loraOf(flags);
  const started = performance.now();
  const { blobs, sync } = await client.pushCheckpoint(component, path, {
    signal: io.signal,
    ...(flags.version === undefined ? {} : { version: flags.version }),
    ...(lora === undefined ? {} : { lora }),
  });
  const blob = blobs[0]!;
  if (!json) {
    const total = blobs.reduce((sum, b) => sum + b.sizeBytes, 0);
    line(
      io.out,
      blobs.length === 1
        ? `uploaded ${path}: ${formatBytes(blob.sizeBytes)}, sha256 ${blob.sha256.slice(0, 16)}…`
        : `uploaded ${path}: ${blobs.length} shards, ${formatBytes(total)}`,
    );
    line(
      io.out,
      `synced ${component} v${sync.version}${lora === undefined ? '' : ` (LoRA on v${lora.base})`} (previous ${sync.previous ?? 'none'})`,
    );
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
    line(
      io.out,
      JSON.stringify({ blob, blobs, sync, ...(progress === undefined ? {} : { progress }) }),
    );
    return EXIT_CODES.ok;
  }
  if (progress !== undefined) {
    const [report, fleet] = await Promise.all([
      client.weights(component, {}, { signal: io.signal }),
      fleetAfterSync(client, component, sync.version, progress.okWorkers, io.signal),
    ]);
    line(
      io.out,
      `v${sync.version} acked ok by ${progress.okWorkers.length}/${progress.liveWorkers.length} live workers in ${formatMs(performance.now() - started)}`,
    );
    const sources = (id: string) => sourceCells(report, sync.version, id);
    for (const text of acksTable(report, sync.version, fleet, sources, ['from', 'fallbacks'])) {
      line(io.out, text);
    }
  }
  return EXIT_CODES.ok;
}
