import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import { canonicalJson } from '@flowfleet/formats';
import {
  bindLoraAdapter,
  loraScale,
  type CardRegistry,
  type CheckpointEntry,
} from '@flowfleet/models';
import {
  WEIGHT_MANIFEST_FORMAT,
  loraAlphaProblem,
  type LoraRecord,
  type ManifestTensor,
  type WeightManifest,
  type WeightSync,
  type WeightVersionRecord,
} from '@flowfleet/protocol';
import type { BlobDigest } from './blob-digest.js';
import type { BlobStore } from './blob-store.js';

/** One layer an adapter binds (models' binding). */
type LoraLayer = ReturnType<typeof bindLoraAdapter>['layers'][number];

/** A sync request as the route validated it. */
export interface SyncRequest {
  readonly version: number;
  readonly sha256?: string | undefined;
  readonly shards?: readonly { readonly sha256: string }[] | undefined;
  readonly lora?: LoraRecord | undefined;
}

/** What the registry records and broadcasts for one sync. */
export interface BuiltVersion {
  readonly sync: WeightSync;
  readonly record: Omit<WeightVersionRecord, 'at'>;
}

/** A manifest the store writes itself: never refused for its size. */
const MANIFEST_MAX_BYTES = Number.MAX_SAFE_INTEGER;

function blobNotFound(sha256: string): FlowfleetError {
  return new FlowfleetError(
    'API_BLOB_NOT_FOUND',
    `no blob ${sha256}: upload it with PUT /v1/blobs before syncing`,
    { details: { sha256 } },
  );
}

function notSafetensors(digest: BlobDigest, role: string): FlowfleetError {
  return new FlowfleetError(
    'FMT_SAFETENSORS_INVALID',
    `${role} ${digest.sha256} is not a safetensors file: ${digest.invalid?.message ?? 'unreadable'}`,
    { details: { reason: digest.invalid?.reason ?? 'unknown', sha256: digest.sha256, role } },
  );
}

/** The tensors of the shards under their checkpoint keys, refusing a key two shards hold. */
function manifestTensors(digests: readonly BlobDigest[]): Record<string, ManifestTensor> {
  const tensors: Record<string, ManifestTensor> = {};
  const problems: string[] = [];
  digests.forEach((digest, shard) => {
    for (const [name, span] of Object.entries(digest.tensors ?? {})) {
      const other = tensors[name];
      if (other !== undefined) {
        problems.push(`${name} is in shard ${other.shard} and shard ${shard}`);
        continue;
      }
      tensors[name] = { shard, ...span };
    }
  });
  if (problems.length > 0) {
    throw new FlowfleetError(
      'FMT_CHECKPOINT_INVALID',
      `two shards hold the same tensor (${problems.slice(0, 3).join('; ')})`,
      { details: { reason: 'shards-overlap', problems } },
    );
  }
  return tensors;
}

/**
 * Checks at the edge that an adapter binds enough layers of the component in some card that has
 * it, and that every bound layer's alpha merges (finite, not 0, a scale within MAX_LORA_SCALE:
 * the silent LoRA no-op and the absurd one are refused before anything is recorded); a component
 * no card here has is left to the workers. A `.alpha` tensor in the file is the workers' to read.
 * @throws FlowfleetError MODEL_LORA_UNBOUND, MODEL_LORA_INVALID (the first card's)
 */
function checkLoraBinds(
  cards: CardRegistry,
  component: string,
  tensors: Readonly<Record<string, CheckpointEntry>>,
  lora: LoraRecord,
): void {
  const specs = cards.cards.flatMap((card) => card.components.filter((c) => c.id === component));
  let first: unknown;
  for (const spec of specs) {
    try {
      const binding = bindLoraAdapter(
        spec,
        new Map(Object.entries(tensors)),
        lora.config,
        lora.expectLayers,
      );
      checkAlphas(binding.layers, lora);
      return;
    } catch (error) {
      if (!isFlowfleetError(error)) throw error;
      first ??= error;
    }
  }
  if (first !== undefined) throw first;
}

/** @throws FlowfleetError MODEL_LORA_INVALID naming the layers whose config alpha cannot merge */
function checkAlphas(layers: readonly LoraLayer[], lora: LoraRecord): void {
  const problems = layers.flatMap((layer) => {
    if (layer.alphaKey !== undefined) return [];
    const scale = loraScale(layer.alpha, layer.rank, lora.config.use_rslora);
    const problem = loraAlphaProblem(layer.alpha, scale);
    return problem === undefined ? [] : [`${layer.target}: ${problem}`];
  });
  if (problems.length > 0) {
    throw new FlowfleetError(
      'MODEL_LORA_INVALID',
      `the adapter's alpha cannot merge (${problems.slice(0, 3).join('; ')})`,
      { details: { problems } },
    );
  }
}

/**
 * Turns a sync request into the version record and the sync message: reads each named blob's
 * upload digest, writes the version's manifest (canonical JSON, content-addressed) when the blobs
 * are safetensors files, and checks what the edge can: the blobs exist and are safetensors files
 * (a single file, each shard, an adapter: one rule), no tensor is in two shards, an adapter binds
 * and its alpha merges. A checkpoint's keys, shapes and values are the workers' to check against
 * their card (their ack names what is wrong).
 * @throws FlowfleetError API_BLOB_NOT_FOUND, API_BLOB_CORRUPT, FMT_SAFETENSORS_INVALID,
 *   FMT_CHECKPOINT_INVALID, MODEL_LORA_UNBOUND, MODEL_LORA_INVALID
 */
export async function buildWeightVersion(
  blobs: BlobStore,
  cards: CardRegistry,
  component: string,
  request: SyncRequest,
): Promise<BuiltVersion> {
  const names = request.shards?.map((shard) => shard.sha256) ?? [request.sha256!];
  const digests: BlobDigest[] = [];
  for (const sha256 of names) {
    const digest = await blobs.blobDigest(sha256);
    if (digest === undefined) throw blobNotFound(sha256);
    digests.push(digest);
  }
  const shards = digests.map(({ sha256, sizeBytes }) => ({ sha256, sizeBytes }));
  const sizeBytes = shards.reduce((total, shard) => total + shard.sizeBytes, 0);
  const single = request.shards === undefined;
  const { version, lora } = request;
  // One rule for every blob a version is made of: a file, a shard, an adapter.
  digests.forEach((digest, i) => {
    const role = lora ? 'adapter' : single ? 'checkpoint' : `shard ${i}`;
    if (digest.tensors === null) throw notSafetensors(digest, role);
  });
  const tensors = manifestTensors(digests);
  if (lora !== undefined) checkLoraBinds(cards, component, tensors, lora);
  const manifest: WeightManifest = { format: WEIGHT_MANIFEST_FORMAT, shards, tensors };
  const stored = await blobs.putBlob(
    [new TextEncoder().encode(canonicalJson(manifest))],
    MANIFEST_MAX_BYTES,
  );
  const sha256 = single ? shards[0]!.sha256 : stored.sha256;
  const kind = lora !== undefined ? 'lora' : single ? undefined : 'sharded';
  return {
    sync: { component, version, sha256, sizeBytes, ...(kind === undefined ? {} : { kind }) },
    record: {
      sha256,
      sizeBytes,
      kind: lora === undefined ? 'full' : 'lora',
      shards,
      manifest: stored,
      ...(lora === undefined ? {} : { lora }),
    },
  };
}
