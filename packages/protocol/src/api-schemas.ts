import { z } from 'zod';
import {
  ComponentIdSchema,
  IdSchema,
  Sha256Schema,
  SyncedVersionSchema,
  TimestampSchema,
} from './atoms.js';
import { LaneNameSchema, RolloutListItemSchema } from './job-status.js';
import { RequirementsSchema } from './requirements.js';
import { SyncStatusSchema } from './weight-sync.js';
import { PlatformFactsSchema } from './worker-manifest.js';

// The coordinator's HTTP response bodies: the coordinator validates its answers against them (and
// generates its OpenAPI document from them), the client validates what it receives. One
// definition, so the two cannot drift. Objects are `z.object` (unknown keys dropped), so a client
// that reads a newer coordinator which adds a field still parses.

const Count = z.int().min(0);

/** The result files a job stores. */
export const RESULT_FILES = ['result.safetensors', 'summary.json'] as const;
/** One result file name. */
export type ResultFile = (typeof RESULT_FILES)[number];

/** `POST /v1/rollouts` → 202. */
export const EnqueuedRolloutSchema = z.object({
  id: IdSchema,
  lane: LaneNameSchema,
  status: z.literal('queued'),
  eligibleWorkers: Count,
});
/** An enqueued rollout: its id, lane and how many live workers could serve it. */
export type EnqueuedRollout = z.infer<typeof EnqueuedRolloutSchema>;

/**
 * `DELETE /v1/rollouts/:id` → 200: the queued job is removed from its lane and will not run (a
 * running one is refused with 409 API_JOB_NOT_CANCELLABLE and finishes).
 */
export const CancelledRolloutSchema = z.object({
  id: IdSchema,
  lane: LaneNameSchema,
  status: z.literal('cancelled'),
});
/** A cancelled rollout: its id and lane. */
export type CancelledRollout = z.infer<typeof CancelledRolloutSchema>;

/** `GET /v1/rollouts`: the most recent rollouts across lanes, newest first. */
export const RolloutListSchema = z.object({ rollouts: z.array(RolloutListItemSchema) });
/** The recent-rollouts listing. */
export type RolloutList = z.infer<typeof RolloutListSchema>;

/** `PUT /v1/blobs` → 201. */
export const StoredBlobSchema = z.object({ sha256: Sha256Schema, sizeBytes: Count });
/** A stored blob's content address and size. */
export type StoredBlob = z.infer<typeof StoredBlobSchema>;

/**
 * The header of `PUT /v1/results/:id` that says how many leading body bytes are `summary.json`
 * (the rest is `result.safetensors`).
 */
export const SUMMARY_BYTES_HEADER = 'x-flowfleet-summary-bytes';

/**
 * The header of `PUT /v1/results/:id` that proves the upload comes from the attempt holding the
 * job: the lock token its worker took the job with. The coordinator stores a result only while
 * this token is the job's current lock (ADR 014).
 */
export const JOB_LOCK_HEADER = 'x-flowfleet-job-lock';

/**
 * The header of `POST /v1/rollouts` that names one enqueue (a UUID): the job id carries it, so a
 * retried request with the same key enqueues nothing new and answers the same job.
 */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/**
 * An Idempotency-Key: a UUID, bare or as the IETF httpapi draft's structured-field string
 * (`"8e03978e-…"`, quotes included), read in lowercase (the form a job id carries).
 */
export const IdempotencyKeySchema = z
  .string()
  .regex(/^"?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"?$/, {
    message: 'expected a UUID',
  })
  .refine((key) => key.startsWith('"') === key.endsWith('"'), { message: 'unbalanced quotes' })
  .transform((key) => key.replaceAll('"', '').toLowerCase());

/** `PUT /v1/results/:id` → 201 (result stored now) or 200 (the same result was already stored). */
export const ResultUploadSchema = z.object({
  id: IdSchema,
  /** Of `result.safetensors`, written once: the same bytes again are `unchanged`. */
  sha256: Sha256Schema,
  sizeBytes: Count,
  status: z.enum(['created', 'unchanged']),
  /** `kept`: an earlier attempt's summary was stored first and stands. */
  summary: z.enum(['created', 'kept']),
});
/** What a result upload did. */
export type ResultUpload = z.infer<typeof ResultUploadSchema>;

/** `POST /v1/weights/:component/sync` → 202. */
export const SyncAcceptedSchema = z.object({
  component: ComponentIdSchema,
  version: SyncedVersionSchema,
  sha256: Sha256Schema,
  sizeBytes: Count,
  /** The newest version synced before this one. */
  previous: SyncedVersionSchema.nullable(),
});
/** An accepted weight sync (recorded, published: the workers reconcile to it). */
export type SyncAccepted = z.infer<typeof SyncAcceptedSchema>;

/**
 * Where a synced version stands across the live fleet (ADR 012): `loaded` (a live worker holds it
 * now), `retired` (workers loaded it, and none that is live holds it any more), `failed` (every
 * live worker that answered refused or failed it, and none is still to answer), `superseded` (a
 * newer version came before any worker loaded it), `pending` (live workers are still to load it).
 */
export const VersionStatusSchema = z.enum(['pending', 'loaded', 'retired', 'failed', 'superseded']);
/** Where a synced version stands across the live fleet. */
export type VersionStatus = z.infer<typeof VersionStatusSchema>;

/** `GET /v1/weights/:component`. */
export const WeightReportSchema = z.object({
  component: ComponentIdSchema,
  /**
   * The newest version a live worker holds (what `maxStaleness` counts from and what a rollout can
   * run on now); null when no live worker holds a synced version.
   */
  current: SyncedVersionSchema.nullable(),
  /** The newest version synced (requested), and its status; null when none was. */
  latest: z.object({ version: SyncedVersionSchema, status: VersionStatusSchema }).nullable(),
  versions: z.record(
    z.string(),
    z.object({
      sha256: Sha256Schema,
      sizeBytes: Count,
      syncedAt: TimestampSchema,
      status: VersionStatusSchema,
      /** The live workers that hold the version now (their manifests' `weights`). */
      holders: z.array(IdSchema),
      /** `full` (a checkpoint of `shards` blobs) or `lora` (an adapter on `base`). */
      kind: z.enum(['full', 'lora']),
      shards: z.int().min(1),
      base: SyncedVersionSchema.nullable(),
      acks: z.record(IdSchema, SyncStatusSchema),
      /** Per worker that refused or failed it: the error code of its ack. */
      codes: z.record(IdSchema, z.string()),
      reasons: z.record(IdSchema, z.string()),
      /** Per worker: the layers a LoRA version's adapter bound there. */
      boundLayers: z.record(IdSchema, z.int().min(0)),
      /** Per worker: the bytes it fetched for the version (less than sizeBytes on a delta). */
      fetchedBytes: z.record(IdSchema, z.int().min(0)),
      /** Per worker: its verified bytes per source (`coordinator` or a peer's id; fan-out). */
      sources: z.record(IdSchema, z.record(z.string(), z.int().min(0))),
      /** Per worker that had any: how often it left a source for the next (ack `fallbacks`). */
      fallbacks: z.record(IdSchema, z.int().min(1)),
    }),
  ),
});
/** A component's current weight version and its newest versions with each worker's ack. */
export type WeightReport = z.infer<typeof WeightReportSchema>;
/** One version in a weight report. */
export type WeightVersionReport = WeightReport['versions'][string];

const RowCountSchema = z.object({ available: Count, declared: Count });

/** `GET /v1/fleet`. */
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
      /** Where peers fetch the weight ranges it holds (its manifest's); absent: no peer server. */
      peerUrl: z.url({ protocol: /^https?$/ }).optional(),
    }),
  ),
});
/** Every registered worker, live and dead. */
export type Fleet = z.infer<typeof FleetSchema>;
/** One worker in the fleet view. */
export type FleetWorker = Fleet['workers'][number];

const LaneCountsSchema = z.object({
  waiting: Count,
  delayed: Count,
  prioritized: Count,
  active: Count,
  completed: Count,
  failed: Count,
});

/** One lane with its requirements, queue counts and capacity. */
export const LaneCapacitySchema = z.object({
  lane: LaneNameSchema,
  requirements: RequirementsSchema,
  createdAt: TimestampSchema,
  backlog: Count,
  counts: LaneCountsSchema,
  /**
   * How many live workers satisfy the lane (their ids: `GET /v1/fleet?lane=`), as of the
   * coordinator's last fleet read (a second old at most, longer only in a fleet that takes over
   * 50 ms to read).
   */
  eligibleWorkers: Count,
  /** The summed concurrency of those workers. */
  capacity: Count,
});
/** One lane with its requirements, queue counts and capacity. */
export type LaneCapacity = z.infer<typeof LaneCapacitySchema>;

/** `GET /v1/fleet/matrix`. */
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
/** The capability matrix: live workers per (op or kind) × (device, arch, variant), and lanes. */
export type Matrix = z.infer<typeof MatrixSchema>;

/** `GET /v1/lanes`. */
export const LanesSchema = z.object({ lanes: z.array(LaneCapacitySchema) });
/** Every recorded lane. */
export type Lanes = z.infer<typeof LanesSchema>;

/** `GET /healthz`. */
export const HealthSchema = z.object({ status: z.literal('ok'), redis: z.literal('up') });
/** The coordinator's health answer. */
export type Health = z.infer<typeof HealthSchema>;

/** `GET /openapi.json`: an object (its content is the coordinator's business). */
export const OpenApiDocumentSchema = z.record(z.string(), z.unknown());
/** The OpenAPI 3.1 document. */
export type OpenApiDocument = z.infer<typeof OpenApiDocumentSchema>;
