import {
  ComponentIdSchema,
  DeviceClassSchema,
  IdSchema,
  JobStateSchema,
  LaneNameSchema,
  MAX_WEIGHT_SHARDS,
  MAX_WEIGHT_VERSION,
  PeftLoraConfigSchema,
  Sha256Schema,
} from '@flowfleet/protocol';
import { z } from 'zod';

// Schemas of the coordinator's own route parameters and request bodies. The response bodies it
// answers with (and the client validates) live in @flowfleet/protocol's api-schemas, one
// definition for both sides; the OpenAPI document is generated from these and those.

export const JobIdParamsSchema = z.strictObject({ id: IdSchema });
/** Longest a status request may wait for a change (`waitMs`). */
export const MAX_STATUS_WAIT_MS = 30_000;

/**
 * `GET /v1/rollouts/:id` query: with `waitMs` and what the caller last saw (`status`, `step`,
 * `attempts`), the answer waits until the job differs from that, is finished, or `waitMs` passed.
 */
export const JobStatusQuerySchema = z.strictObject({
  waitMs: z.coerce
    .number()
    .int()
    .min(0)
    .max(MAX_STATUS_WAIT_MS)
    .default(0)
    .describe('Long-poll: wait up to this long for the job to differ from status/step/attempts'),
  status: JobStateSchema.optional().describe('The status the caller last saw'),
  step: z.coerce.number().int().min(0).optional().describe('The progress step the caller last saw'),
  attempts: z.coerce.number().int().min(0).optional().describe('The attempts the caller last saw'),
});

export const BlobParamsSchema = z.strictObject({ sha256: Sha256Schema });
export const ComponentParamsSchema = z.strictObject({ component: ComponentIdSchema });
export const WeightReportQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

/**
 * `POST /v1/weights/:component/sync` body: `{version, sha256}` (one safetensors file),
 * `{version, shards: [{sha256}, …]}` (a sharded checkpoint, in the index's file order), or
 * `{version, sha256, lora: {base, config, expectLayers?}}` (a LoRA adapter merged into version
 * `base`; `config` is PEFT's adapter_config.json).
 */
export const SyncBodySchema = z
  .strictObject({
    version: z.int().min(1).max(MAX_WEIGHT_VERSION),
    sha256: Sha256Schema.optional(),
    shards: z
      .array(z.strictObject({ sha256: Sha256Schema }))
      .min(1)
      .max(MAX_WEIGHT_SHARDS)
      .optional(),
    lora: z
      .strictObject({
        base: z.int().min(1).max(MAX_WEIGHT_VERSION),
        config: PeftLoraConfigSchema,
        expectLayers: z.int().min(1).optional(),
      })
      .optional(),
  })
  .refine((body) => (body.sha256 === undefined) !== (body.shards === undefined), {
    message: 'give sha256 (one file) or shards (a sharded checkpoint), not both',
    path: ['sha256'],
  })
  .refine((body) => body.lora === undefined || body.sha256 !== undefined, {
    message: 'a LoRA adapter is one file: give its sha256',
    path: ['lora'],
  })
  .refine((body) => body.lora === undefined || body.lora.base < body.version, {
    message: 'lora.base must be a version below the new one',
    path: ['lora', 'base'],
  });

/** `GET /v1/fleet` query: only the live workers that can serve `lane`. */
export const FleetQuerySchema = z.strictObject({
  lane: LaneNameSchema.optional().describe(
    'Answer only the live workers that satisfy this lane (the ids behind its eligibleWorkers)',
  ),
});

/** `GET /v1/scaling` query: `deviceClass` (percent-encoded, e.g. `cuda%2Fsm90`) answers one class. */
export const ScalingQuerySchema = z.strictObject({
  deviceClass: DeviceClassSchema.optional().describe(
    'Answer only this device class (<device>/<arch>, percent-encoded in the URL)',
  ),
});
