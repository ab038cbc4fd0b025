import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { FlowfleetError } from '@flowfleet/errors';
import { openSafetensorsCheckpoint } from '@flowfleet/formats';
import {
  PeftLoraConfigSchema,
  parseOrThrow,
  type PeftLoraConfigJson,
  type StoredBlob,
  type SyncAccepted,
} from '@flowfleet/protocol';
import { fileBody, type HashedBody } from './file-body.js';
import type { CallOptions } from './http-transport.js';

/** A LoRA sync's part of a push: the base version, PEFT's config, the layers it must bind. */
export interface LoraSyncOptions {
  readonly base: number;
  /** PEFT's adapter_config.json object (default: the `adapter_config.json` beside the adapter). */
  readonly config?: PeftLoraConfigJson;
  /** Refuse the sync unless the adapter binds at least this many layers. */
  readonly expectLayers?: number;
}

/** Options of {@link pushCheckpoint}. */
export interface PushCheckpointOptions extends CallOptions {
  /** The version (default: the latest synced version + 1, loaded or not). */
  readonly version?: number;
  /** Sync the file as a LoRA adapter merged into `lora.base`. */
  readonly lora?: LoraSyncOptions;
}

/** What a push did: the blobs uploaded (one per shard) and the accepted sync. */
export interface PushedCheckpoint {
  readonly blobs: readonly StoredBlob[];
  readonly sync: SyncAccepted;
}

/** The client calls a push makes. */
export interface CheckpointPusher {
  uploadBlobStream(body: HashedBody, call?: CallOptions): Promise<StoredBlob>;
  syncWeights(
    component: string,
    version: number,
    blobs: string | readonly string[],
    options?: CallOptions & {
      readonly lora?: LoraSyncOptions & { readonly config: PeftLoraConfigJson };
    },
  ): Promise<SyncAccepted>;
  weights(
    component: string,
    query?: { readonly limit?: number },
    call?: CallOptions,
  ): Promise<{ latest: { version: number } | null }>;
}

async function readConfig(path: string): Promise<PeftLoraConfigJson> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    throw new FlowfleetError('FMT_FILE_IO', `cannot read ${path}`, { details: { path }, cause });
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (cause) {
    throw new FlowfleetError('CLIENT_INVALID_OPTIONS', `${path} is not JSON`, {
      details: { option: 'lora.config', path },
      cause,
    });
  }
  return parseOrThrow(PeftLoraConfigSchema, value, 'CLIENT_INVALID_OPTIONS', path);
}

/**
 * Uploads a checkpoint — a safetensors file, or a directory with one (a PEFT adapter directory
 * too) or with a `*.safetensors.index.json` and its shards — each shard streamed from its file
 * (one chunk in memory at a time; a shard may pass 2 GiB up to the coordinator's blob limit), and
 * syncs it as the next version of `component` (or as `options.version`).
 * @throws FlowfleetError FMT_CHECKPOINT_INVALID, FMT_SAFETENSORS_INVALID, FMT_FILE_IO (the
 *   checkpoint on disk), CLIENT_INVALID_OPTIONS (a sharded adapter, a malformed config), and the
 *   codes of uploadBlob and syncWeights
 */
export async function pushCheckpoint(
  client: CheckpointPusher,
  component: string,
  path: string,
  options: PushCheckpointOptions = {},
): Promise<PushedCheckpoint> {
  const { version, lora, ...call } = options;
  const checkpoint = await openSafetensorsCheckpoint(path);
  const first = checkpoint.shards[0]!;
  if (lora !== undefined && checkpoint.shards.length > 1) {
    throw new FlowfleetError('CLIENT_INVALID_OPTIONS', `${path}: a LoRA adapter is one file`, {
      details: { option: 'lora', shards: checkpoint.shards.length },
    });
  }
  const loraBody =
    lora === undefined
      ? undefined
      : {
          ...lora,
          config:
            lora.config ?? (await readConfig(join(dirname(first.path), 'adapter_config.json'))),
        };
  // Versions only increase past every synced one, refused ones too: the latest, not the current.
  const next =
    version ?? ((await client.weights(component, { limit: 1 }, call)).latest?.version ?? 0) + 1;
  const blobs: StoredBlob[] = [];
  for (const shard of checkpoint.shards) {
    // Streamed from the file, not read with `readFile` (which stops at 2 GiB).
    blobs.push(await client.uploadBlobStream(await fileBody(shard.path), call));
  }
  const names = blobs.map((blob) => blob.sha256);
  const sync = await client.syncWeights(
    component,
    next,
    checkpoint.indexPath === undefined ? names[0]! : names,
    { ...call, ...(loraBody === undefined ? {} : { lora: loraBody }) },
  );
  return { blobs, sync };
}
