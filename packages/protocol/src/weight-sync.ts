import { z } from 'zod';
import { ComponentIdSchema, IdSchema, Sha256Schema, TimestampSchema } from './atoms.js';
import { DEFAULT_LIMITS, type Limits } from './limits.js';

/**
 * The weight-sync schema under `limits`: the trainer announces that `component` is now at
 * `version` (strictly increasing from 1), whose safetensors blob has this sha256 and size.
 */
export function weightSyncSchema(limits: Limits = DEFAULT_LIMITS) {
  return z.strictObject({
    component: ComponentIdSchema,
    version: z.int().min(1),
    sha256: Sha256Schema,
    sizeBytes: z.int().min(1).max(limits.maxBlobBytes),
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
 * A worker's acknowledgement of a sync: `ok` (staged, graphs evicted), `refused` (the blob failed
 * verification; the worker stays on its old version) or `failed` (it could not load it). A
 * non-`ok` ack must say why.
 */
export const SyncAckSchema = z
  .object({
    workerId: IdSchema,
    component: ComponentIdSchema,
    version: z.int().min(1),
    status: SyncStatusSchema,
    reason: z.string().min(1).optional(),
    at: TimestampSchema,
  })
  .refine((ack) => ack.status === 'ok' || ack.reason !== undefined, {
    message: 'a refused or failed ack needs a reason',
    path: ['reason'],
  });
/** A worker's acknowledgement of a sync. */
export type SyncAck = z.infer<typeof SyncAckSchema>;
