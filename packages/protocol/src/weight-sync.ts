import { z } from 'zod';
import {
  ComponentIdSchema,
  IdSchema,
  Sha256Schema,
  SyncedVersionSchema,
  TimestampSchema,
} from './atoms.js';
import { DEFAULT_LIMITS, type Limits } from './limits.js';
import { MAX_ACK_FALLBACKS, SyncFallbackSchema } from './weight-fanout.js';
import { MAX_WEIGHT_SHARDS } from './weight-record.js';

/**
 * The weight-sync message under `limits` (the sync channel carries it): `component` has a new
 * `version` (strictly increasing from 1), whose content id and full-fetch size are `sha256` and
 * `sizeBytes` (its version record says the rest: `kind`, shards, manifest, LoRA base, fan-out
 * plan). To a worker it is a trigger only: it reconciles the component against the weights hash
 * (ADR 012). `kind` is present for sharded and LoRA versions; one blob (a file, an adapter, each
 * shard) is at most `maxBlobBytes`.
 */
export function weightSyncSchema(limits: Limits = DEFAULT_LIMITS) {
  return z
    .strictObject({
      component: ComponentIdSchema,
      version: SyncedVersionSchema,
      sha256: Sha256Schema,
      sizeBytes: z
        .int()
        .min(1)
        .max(limits.maxBlobBytes * MAX_WEIGHT_SHARDS),
      kind: z.enum(['sharded', 'lora']).optional(),
    })
    .refine((sync) => sync.kind === 'sharded' || sync.sizeBytes <= limits.maxBlobBytes, {
      message: `one blob is at most maxBlobBytes (${limits.maxBlobBytes})`,
      path: ['sizeBytes'],
    });
}

/** The weight-sync schema under the default limits. */
export const WeightSyncSchema = weightSyncSchema(DEFAULT_LIMITS);
/** A weight sync. */
export type WeightSync = z.infer<typeof WeightSyncSchema>;

/** What became of a sync on one worker. */
export const SyncStatusSchema = z.enum(['ok', 'refused', 'failed']);
/** What became of a sync on one worker. */
export type SyncStatus = z.infer<typeof SyncStatusSchema>;

/**
 * A worker's acknowledgement of a sync: `ok` (staged, graphs evicted), `refused` (the version's
 * bytes or tensors are wrong — a digest, a layout, names or shapes, a non-finite value, a LoRA that
 * does not bind or merge — remembered, never tried again; the worker stays on its old version) or
 * `failed` (it could not load it now: tried again). A non-`ok` ack must say why, with the code.
 */
export const SyncAckSchema = z
  .object({
    workerId: IdSchema,
    component: ComponentIdSchema,
    version: SyncedVersionSchema,
    status: SyncStatusSchema,
    reason: z.string().min(1).optional(),
    /** The error code of a refusal or failure, when it had one. */
    code: z.string().min(1).optional(),
    /** A LoRA version: how many layers its adapter bound on this worker. */
    boundLayers: z.int().min(0).optional(),
    /** Bytes this worker fetched for the version (a delta fetches only changed tensors). */
    fetchedBytes: z.int().min(0).optional(),
    /** Tensors it kept from the version it held instead of fetching them. */
    reusedTensors: z.int().min(0).optional(),
    /** Verified bytes per source (`coordinator` or a peer's worker id; fan-out, ADR 009). */
    sources: z.record(z.string().min(1), z.int().min(0)).optional(),
    /** How many times it left a source for the next (a dead peer, bad bytes, a timeout). */
    fallbackCount: z.int().min(0).optional(),
    /** The first of those fallbacks, each with the code and reason. */
    fallbacks: z.array(SyncFallbackSchema).max(MAX_ACK_FALLBACKS).optional(),
    at: TimestampSchema,
  })
  .refine((ack) => ack.status === 'ok' || ack.reason !== undefined, {
    message: 'a refused or failed ack needs a reason',
    path: ['reason'],
  });
/** A worker's acknowledgement of a sync. */
export type SyncAck = z.infer<typeof SyncAckSchema>;
