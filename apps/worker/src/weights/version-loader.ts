import { createHash } from 'node:crypto';
import { FlowfleetError } from '@flowfleet/errors';
import {
  bindCheckpoint,
  bindLoraAdapter,
  loraScale,
  type CheckpointEntry,
  type LoraMergeInput,
  type ModelComponentSpec,
} from '@flowfleet/models';
import type { TensorData } from '@flowfleet/platform';
import {
  WeightManifestSchema,
  type WeightBlob,
  type WeightManifest,
  type WeightVersionRecord,
} from '@flowfleet/protocol';
import { verifyWeightsBlob } from './blob-verifier.js';
import {
  fetchTensors,
  type FetchObserver,
  type PeerRangeSource,
  type RangeSource,
  type NeededTensor,
} from './tensor-fetcher.js';

/** Where a load may take ranges from besides the coordinator, and who watches it (fan-out). */
export interface LoadVia {
  readonly peers: readonly PeerRangeSource[];
  /** The plan's chunk size: the most bytes per range request (default 8 MiB). */
  readonly maxRequestBytes?: number;
  readonly observer?: FetchObserver;
}

/** The digest and dtype of the bytes a held tensor was decoded from. */
export interface TensorOrigin {
  readonly sha256: string;
  readonly dtype: string;
}

/** A version of a component in memory, and where its tensors came from. */
export interface HeldVersion {
  readonly version: number;
  readonly tensors: ReadonlyMap<string, TensorData>;
  /** By card name; absent for a tensor of unknown bytes (initial, merged, fetched whole). */
  readonly origins: ReadonlyMap<string, TensorOrigin>;
}

/** A version built by the loader, with what building it took. */
export interface LoadedVersion extends HeldVersion {
  readonly fetchedBytes: number;
  readonly reusedTensors: number;
  /** A LoRA version: the layers its adapter bound. */
  readonly boundLayers?: number;
}

/** Whole blobs and byte ranges of blobs. */
export interface WeightBlobSource extends RangeSource {
  fetchBlob(sha256: string, maxBytes: number, signal?: AbortSignal): Promise<Uint8Array>;
}

/** The LoRA merge, off the event loop (models' LoraMerger on the worker's compute pool). */
export interface LayerMerger {
  /** Merges run at most this many at a time (each holds a copy of its W). */
  readonly parallelism: number;
  merge(input: LoraMergeInput): Promise<Float32Array>;
}

/** What the loader reads and where it merges. */
export interface VersionLoaderOptions {
  readonly records: (
    component: string,
    version: number,
  ) => Promise<WeightVersionRecord | undefined>;
  readonly blobs: WeightBlobSource;
  readonly spec: (component: string) => ModelComponentSpec;
  readonly merger: () => Promise<LayerMerger>;
  /** The largest whole blob to download (the fleet's published `maxBlobBytes`, read then). */
  readonly maxBlobBytes: (sizeBytes: number) => Promise<number>;
  readonly signal: AbortSignal;
}

/** LoRA versions on LoRA versions deeper than this are refused (a loop in the records). */
const MAX_BASE_DEPTH = 16;

function refused(
  what: string,
  reason: string,
  message: string,
  extra: Record<string, unknown> = {},
) {
  return new FlowfleetError('WORKER_BLOB_REFUSED', `${what}: ${message}`, {
    details: { reason, ...extra },
  });
}

function entriesOf(manifest: WeightManifest): Map<string, CheckpointEntry> {
  return new Map(Object.entries(manifest.tensors).map(([key, t]) => [key, t]));
}

/**
 * Builds a version of a component from its record, reusing what the worker holds: a full
 * checkpoint through its manifest — each tensor's key mapped by the card, fetched as a byte range
 * only when its digest differs from the held tensor's (a delta; everything when nothing held
 * matches), verified, widened to float32 — or a LoRA adapter merged into its base version (built
 * the same way when it is not the held one); records without a manifest fetch the blob whole.
 * Nothing is staged here and nothing is kept when any step fails.
 */
export class VersionLoader {
  readonly #options: VersionLoaderOptions;

  constructor(options: VersionLoaderOptions) {
    this.#options = options;
  }

  /**
   * Version `version` of `component`, described by `record`, built over `held`.
   * @throws FlowfleetError WORKER_BLOB_REFUSED (`details.reason`), MODEL_WEIGHTS_MISMATCH,
   *   MODEL_LORA_UNBOUND, MODEL_LORA_INVALID (refusals); transport codes (failures)
   */
  async load(
    component: string,
    version: number,
    record: WeightVersionRecord,
    held: HeldVersion,
    via: LoadVia = { peers: [] },
    depth = 0,
  ): Promise<LoadedVersion> {
    const what = `${component} v${version}`;
    if (record.manifest === null) {
      throw refused(
        what,
        'safetensors',
        `not a valid safetensors file (${record.invalid ?? 'unreadable'})`,
      );
    }
    if (record.manifest === undefined) return this.#loadWhole(component, version, record);
    const manifest = await this.#manifest(what, record.manifest);
    if (record.kind === 'lora')
      return this.#loadLora(component, version, record, manifest, held, via, depth);
    const spec = this.#options.spec(component);
    const bound = bindCheckpoint(spec, entriesOf(manifest));
    const tensors = new Map<string, TensorData>();
    const origins = new Map<string, TensorOrigin>();
    const needed: NeededTensor[] = [];
    for (const [name, key] of bound) {
      const tensor = manifest.tensors[key]!;
      origins.set(name, { sha256: tensor.sha256, dtype: tensor.dtype });
      const origin = held.origins.get(name);
      const kept = held.tensors.get(name);
      if (kept !== undefined && origin?.sha256 === tensor.sha256 && origin.dtype === tensor.dtype) {
        tensors.set(name, kept);
      } else {
        needed.push({ name, key, tensor });
      }
    }
    const fetched = await fetchTensors(this.#options.blobs, manifest.shards, needed, {
      what,
      signal: this.#options.signal,
      ...via,
    });
    for (const [name, tensor] of fetched.tensors) tensors.set(name, tensor);
    return {
      version,
      tensors: new Map([...bound.keys()].map((name) => [name, tensors.get(name)!])),
      origins,
      fetchedBytes: fetched.fetchedBytes,
      reusedTensors: bound.size - needed.length,
    };
  }

  async #loadLora(
    component: string,
    version: number,
    record: WeightVersionRecord,
    manifest: WeightManifest,
    held: HeldVersion,
    via: LoadVia,
    depth: number,
  ): Promise<LoadedVersion> {
    const what = `${component} v${version}`;
    const lora = record.lora;
    if (lora === undefined)
      throw refused(what, 'lora', 'a LoRA record without its base and config');
    const binding = bindLoraAdapter(
      this.#options.spec(component),
      entriesOf(manifest),
      lora.config,
      lora.expectLayers,
    );
    let base: HeldVersion = held;
    let fetchedBytes = 0;
    if (held.version !== lora.base) {
      if (depth >= MAX_BASE_DEPTH)
        throw refused(what, 'lora', `more than ${MAX_BASE_DEPTH} LoRA bases deep`);
      const baseRecord = await this.#options.records(component, lora.base);
      if (baseRecord === undefined)
        throw refused(what, 'lora', `its base v${lora.base} has no record`);
      const loaded = await this.load(component, lora.base, baseRecord, held, via, depth + 1);
      base = loaded;
      fetchedBytes += loaded.fetchedBytes;
    }
    const needed = binding.layers.flatMap((layer) =>
      [layer.down, layer.up, ...(layer.alphaKey === undefined ? [] : [layer.alphaKey])].map(
        (key) => ({
          name: key,
          key,
          tensor: manifest.tensors[key]!,
        }),
      ),
    );
    const adapter = await fetchTensors(this.#options.blobs, manifest.shards, needed, {
      what,
      signal: this.#options.signal,
      ...via,
    });
    fetchedBytes += adapter.fetchedBytes;
    const merger = await this.#options.merger();
    const tensors = new Map(base.tensors);
    const origins = new Map(base.origins);
    const layers = [...binding.layers];
    const run = async (): Promise<void> => {
      for (let layer = layers.shift(); layer !== undefined; layer = layers.shift()) {
        const alpha =
          layer.alphaKey === undefined ? layer.alpha : adapter.tensors.get(layer.alphaKey)!.data[0];
        const merged = await merger.merge({
          weight: base.tensors.get(layer.target)!.data as Float32Array,
          down: adapter.tensors.get(layer.down)!.data as Float32Array,
          up: adapter.tensors.get(layer.up)!.data as Float32Array,
          outFeatures: layer.outFeatures,
          inFeatures: layer.inFeatures,
          rank: layer.rank,
          scale: loraScale(Number(alpha), layer.rank, lora.config.use_rslora),
        });
        tensors.set(layer.target, {
          dtype: 'float32',
          dims: [layer.outFeatures, layer.inFeatures],
          data: merged,
        });
        origins.delete(layer.target);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, merger.parallelism) }, run));
    return {
      version,
      tensors,
      origins,
      fetchedBytes,
      reusedTensors: tensors.size - binding.boundLayers,
      boundLayers: binding.boundLayers,
    };
  }

  /** A record without a manifest: the one blob, fetched whole and verified as before. */
  async #loadWhole(
    component: string,
    version: number,
    record: WeightVersionRecord,
  ): Promise<LoadedVersion> {
    const { blobs, signal } = this.#options;
    const maxBytes = await this.#options.maxBlobBytes(record.sizeBytes);
    const bytes = await blobs.fetchBlob(record.sha256, maxBytes, signal);
    const expected = { component, version, sha256: record.sha256, sizeBytes: record.sizeBytes };
    const tensors = verifyWeightsBlob(
      bytes,
      expected,
      this.#options.spec(component).parameterShapes(),
    );
    return {
      version,
      tensors,
      origins: new Map(),
      fetchedBytes: bytes.byteLength,
      reusedTensors: 0,
    };
  }

  async #manifest(what: string, blob: WeightBlob): Promise<WeightManifest> {
    const { blobs, signal } = this.#options;
    const bytes = await blobs.fetchBlob(blob.sha256, blob.sizeBytes, signal);
    const actual = createHash('sha256').update(bytes).digest('hex');
    if (actual !== blob.sha256 || bytes.byteLength !== blob.sizeBytes) {
      throw refused(
        what,
        'manifest',
        `its manifest arrived as ${actual} (${bytes.byteLength} bytes), not ${blob.sha256}`,
      );
    }
    let value: unknown;
    try {
      value = JSON.parse(new TextDecoder().decode(bytes)) as unknown;
    } catch {
      throw refused(what, 'manifest', 'its manifest is not JSON');
    }
    const parsed = WeightManifestSchema.safeParse(value);
    if (!parsed.success)
      throw refused(what, 'manifest', `its manifest is malformed (${parsed.error.message})`);
    return parsed.data;
  }
}
