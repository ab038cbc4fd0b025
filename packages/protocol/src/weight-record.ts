import { z } from 'zod';
import { Sha256Schema, SyncedVersionSchema, TimestampSchema } from './atoms.js';
import { FanoutPlanSchema } from './weight-fanout.js';

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

/**
 * The largest |scale| a LoRA merge takes (scale = alpha / r, or alpha / √r with rsLoRA): real
 * adapters merge at 0.25–16; beyond this the merged weights are noise, or overflow float32.
 */
export const MAX_LORA_SCALE = 1024;

/**
 * Why a LoRA layer with this `alpha` merging at `scale` cannot be merged, or undefined: a
 * non-finite alpha or scale, an alpha of 0 (the adapter would change nothing: a silent no-op
 * version, refused like an adapter that binds no layer), or |scale| above MAX_LORA_SCALE.
 */
export function loraAlphaProblem(alpha: number, scale: number): string | undefined {
  if (!Number.isFinite(alpha) || !Number.isFinite(scale)) {
    return `alpha ${alpha} (scale ${scale}) is not finite`;
  }
  if (alpha === 0) return 'alpha 0 merges nothing (a no-op version)';
  if (Math.abs(scale) > MAX_LORA_SCALE) {
    return `alpha ${alpha} gives scale ${scale}, beyond ±${MAX_LORA_SCALE}`;
  }
  return undefined;
}

/** What a LoRA version adds to its record: its base version and how the adapter merges. */
export const LoraRecordSchema = z.strictObject({
  base: SyncedVersionSchema,
  config: PeftLoraConfigSchema,
  expectLayers: z.int().min(1).optional(),
});
/** The LoRA part of a version record. */
export type LoraRecord = z.infer<typeof LoraRecordSchema>;

/**
 * The record of one version in the component's weights hash (field `v:<n>`), written once by the
 * coordinator's sync — the whole desired state of the version, so a worker reads it with the
 * hash in one round trip (docs: apps/coordinator/README.md "Weight versions"):
 * - `sha256`, `sizeBytes`: the version's content id and the bytes a full fetch moves — a single
 *   file's own; a sharded checkpoint's manifest sha256 and the shards' total; a LoRA adapter's;
 * - `kind`: `full` (a checkpoint) or `lora` (an adapter merged into `lora.base`); absent: full;
 * - `shards`: the blobs, in order (every one a safetensors file, checked at the edge);
 * - `manifest`: the manifest blob (every tensor's span and digest);
 * - `plan`: the fan-out plan (ADR 009), absent when the sync planned none; a worker uses it while
 *   the record is younger than FANOUT_PLAN_TTL_MS.
 * A record that does not parse (one from before manifests, a damaged one) is refused by workers.
 */
export const WeightVersionRecordSchema = z.object({
  sha256: Sha256Schema,
  sizeBytes: z.int().min(1),
  at: TimestampSchema.optional(),
  kind: z.enum(['full', 'lora']).optional(),
  shards: z.array(WeightBlobSchema).min(1).max(MAX_WEIGHT_SHARDS),
  manifest: WeightBlobSchema,
  lora: LoraRecordSchema.optional(),
  plan: FanoutPlanSchema.optional(),
});
/** A version record. */
export type WeightVersionRecord = z.infer<typeof WeightVersionRecordSchema>;
