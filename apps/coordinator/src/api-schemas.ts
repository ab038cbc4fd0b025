import { ComponentIdSchema, IdSchema, Sha256Schema } from '@flowfleet/protocol';
import { z } from 'zod';

// Schemas of the coordinator's own route parameters and request bodies. The response bodies it
// answers with (and the client validates) live in @flowfleet/protocol's api-schemas, one
// definition for both sides; the OpenAPI document is generated from these and those.

export const JobIdParamsSchema = z.strictObject({ id: IdSchema });
export const BlobParamsSchema = z.strictObject({ sha256: Sha256Schema });
export const ComponentParamsSchema = z.strictObject({ component: ComponentIdSchema });
export const WeightReportQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

/** `POST /v1/weights/:component/sync` body. */
export const SyncBodySchema = z.strictObject({
  version: z.int().min(1),
  sha256: Sha256Schema,
});
