import {
  ComponentIdSchema,
  IdSchema,
  PlatformFactsSchema,
  RequirementsSchema,
  Sha256Schema,
  SyncStatusSchema,
  TimestampSchema,
} from '@flowfleet/protocol';
import { z } from 'zod';
import { RESULT_FILES } from './blob-store.js';

// Schemas of the coordinator's own request parameters and response bodies. Bodies and messages
// shared with workers and clients live in @flowfleet/protocol; these describe API views only
// (the OpenAPI document is generated from them, and tests validate responses against them).

const LaneNameSchema = z.string().regex(/^lane-[0-9a-f]{16}$/);
const Count = z.int().min(0);

export const JobIdParamsSchema = z.strictObject({ id: IdSchema });
export const ResultParamsSchema = z.strictObject({ id: IdSchema, file: z.enum(RESULT_FILES) });
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

export const EnqueuedRolloutSchema = z.object({
  id: IdSchema,
  lane: LaneNameSchema,
  status: z.literal('queued'),
  eligibleWorkers: Count,
});

export const StoredBlobSchema = z.object({ sha256: Sha256Schema, sizeBytes: Count });

export const ResultWriteSchema = z.object({
  id: IdSchema,
  file: z.enum(RESULT_FILES),
  sha256: Sha256Schema,
  sizeBytes: Count,
  status: z.enum(['created', 'unchanged']),
});

export const SyncAcceptedSchema = z.object({
  component: ComponentIdSchema,
  version: z.int().min(1),
  sha256: Sha256Schema,
  sizeBytes: Count,
  previous: z.int().min(1).nullable(),
  streamId: z.string(),
});

export const WeightReportSchema = z.object({
  component: ComponentIdSchema,
  current: z.int().min(1).nullable(),
  versions: z.record(
    z.string(),
    z.object({
      sha256: Sha256Schema,
      sizeBytes: Count,
      syncedAt: TimestampSchema,
      status: z.enum(['pending', 'loaded', 'failed', 'superseded']),
      acks: z.record(IdSchema, SyncStatusSchema),
      reasons: z.record(IdSchema, z.string()),
    }),
  ),
});

const RowCountSchema = z.object({ available: Count, declared: Count });

export const FleetSchema = z.object({
  live: Count,
  dead: Count,
  workers: z.array(
    z.object({
      workerId: IdSchema,
      alive: z.boolean(),
      host: z.string(),
      pid: z.int(),
      platform: PlatformFactsSchema,
      version: z.string(),
      startedAt: TimestampSchema,
      concurrency: z.int().min(1),
      activeJobs: Count,
      lastHeartbeatAt: TimestampSchema.nullable(),
      lanes: z.array(LaneNameSchema),
      models: z.array(z.string()),
      weights: z.record(z.string(), z.int()),
      kernels: RowCountSchema,
      components: RowCountSchema,
    }),
  ),
});

const LaneCountsSchema = z.object({
  waiting: Count,
  delayed: Count,
  prioritized: Count,
  active: Count,
  completed: Count,
  failed: Count,
});

export const LaneCapacitySchema = z.object({
  lane: LaneNameSchema,
  requirements: RequirementsSchema,
  createdAt: TimestampSchema,
  backlog: Count,
  counts: LaneCountsSchema,
  eligibleWorkers: z.array(IdSchema),
  capacity: Count,
});

export const MatrixSchema = z.object({
  liveWorkers: Count,
  cells: z.array(
    z.object({
      registry: z.enum(['kernel', 'component']),
      name: z.string(),
      device: z.string(),
      arch: z.string().optional(),
      variant: z.string(),
      liveWorkers: Count,
    }),
  ),
  lanes: z.array(LaneCapacitySchema),
});

export const LanesSchema = z.object({ lanes: z.array(LaneCapacitySchema) });

export const HealthSchema = z.object({ status: z.literal('ok'), redis: z.literal('up') });
