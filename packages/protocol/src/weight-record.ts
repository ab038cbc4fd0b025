import { z } from 'zod';
import { Sha256Schema, TimestampSchema } from './atoms.js';

/** The most shards one version may have. */
export const MAX_WEIGHT_SHARDS = 1024;

/** The name of the weights-manifest format (its `format` field). */
export const WEIGHT_MANIFEST_FORMAT = 'flowfleet.weights-manifest/1';

/** A blob a version is made of (a checkpoint shard, a LoRA adapter, a manifest). */
export const WeightBlobSchema = z.strictObject({
  sha256: Sha256Schema,
  sizeBytes: z.int().min(1),
});
/** A blob a version is made of. */
export type WeightBlob = z.infer<typeof WeightBlobSchema>;

/**
 * One tensor of a version: which shard holds it, its header facts, where its bytes are in the
 * shard's file (absolute offsets, `[begin, end)`: a byte range to fetch) and their sha256 (what a
 * fetched range is verified against, from any source).
 */
export const ManifestTensorSchema = z.strictObject({
  shard: z.int().min(0),
  dtype: z.string().min(1),
  shape: z.array(z.int().min(0)),
  begin: z.int().min(0),
  end: z.int().min(0),
  sha256: Sha256Schema,
});
/** One tensor of a version manifest. */
export type ManifestTensor = z.infer<typeof ManifestTensorSchema>;

/**
 * A version's byte layout (stored as a content-addressed blob, canonical JSON, named by the
 * version record): every shard, and every tensor under its checkpoint key. The tensor digests are
 * taken as the shard is uploaded, in the same pass that names it, so they vouch for the bytes
 * the trainer sent; a worker that verifies every tensor it adopts has verified every byte.
 */
export const WeightManifestSchema = z.strictObject({
  format: z.literal(WEIGHT_MANIFEST_FORMAT),
  shards: z.array(WeightBlobSchema).min(1).max(MAX_WEIGHT_SHARDS),
  tensors: z.record(z.string().min(1), ManifestTensorSchema),
});
/** A version's byte layout. */
export type WeightManifest = z.infer<typeof WeightManifestSchema>;

/**
 * The fields of PEFT's `adapter_config.json` a LoRA sync needs (`r`, `lora_alpha`,
 * `target_modules`, `use_rslora`) and the ones that change a merge; any other field is kept.
 */
export const PeftLoraConfigSchema = z.looseObject({
  r: z.int().min(1),
  lora_alpha: z.number().finite(),
  target_modules: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
  use_rslora: z.boolean(),
  rank_pattern: z.record(z.string(), z.int().min(1)).nullish(),
  alpha_pattern: z.record(z.string(), z.number().finite()).nullish(),
  use_dora: z.boolean().nullish(),
  fan_in_fan_out: z.boolean().nullish(),
  lora_bias: z.boolean().nullish(),
  bias: z.string().nullish(),
});
/** PEFT's LoRA adapter config, as a sync carries it. */
export type PeftLoraConfigJson = z.infer<typeof PeftLoraConfigSchema>;

/** What a LoRA version adds to its record: its base version and how the adapter merges. */
export const LoraRecordSchema = z.strictObject({
  base: z.int().min(1),
  config: PeftLoraConfigSchema,
  expectLayers: z.int().min(1).optional(),
});
/** The LoRA part of a version record. */
export type LoraRecord = z.infer<typeof LoraRecordSchema>;

/**
 * The record of one version in the component's weights hash (field `v:<n>`), written once by the
 * coordinator's sync (docs: apps/coordinator/README.md "Version records"):
 * - `sha256`, `sizeBytes`: the version's content id and the bytes a full fetch moves — a single
 *   file's own; a sharded checkpoint's manifest sha256 and the shards' total; a LoRA adapter's;
 * - `kind`: `full` (a checkpoint) or `lora` (an adapter merged into `lora.base`); absent: full;
 * - `shards`: the blobs, in order (absent: the one blob `sha256`);
 * - `manifest`: the manifest blob; `null` when the one blob is not a safetensors file (workers
 *   refuse such a version; `invalid` says why); absent on records that predate manifests (workers
 *   fetch the blob whole).
 */
export const WeightVersionRecordSchema = z.object({
  sha256: Sha256Schema,
  sizeBytes: z.int().min(1),
  at: TimestampSchema.optional(),
  kind: z.enum(['full', 'lora']).optional(),
  shards: z.array(WeightBlobSchema).min(1).max(MAX_WEIGHT_SHARDS).optional(),
  manifest: WeightBlobSchema.nullable().optional(),
  invalid: z.string().optional(),
  lora: LoraRecordSchema.optional(),
});
/** A version record. */
export type WeightVersionRecord = z.infer<typeof WeightVersionRecordSchema>;
