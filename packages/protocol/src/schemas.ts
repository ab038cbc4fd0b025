import { CaptureStatsSchema, RolloutSummarySchema } from '@flowfleet/formats';
import {
  ConstraintsSchema,
  LatentShapeSchema,
  RolloutRequestSchema,
  TextEmbedsRefSchema,
} from './rollout-request.js';
import { ErrorEnvelopeSchema } from './error-envelope.js';
import { JobProgressSchema, JobStatusSchema, RolloutListItemSchema } from './job-status.js';
import { LaneSpecSchema } from './lane-spec.js';
import { RequirementsSchema } from './requirements.js';
import { RolloutJobSchema } from './rollout-job.js';
import { WeightRequirementsSchema } from './weight-requirement.js';
import { SyncAckSchema, WeightSyncSchema } from './weight-sync.js';
import { WorkerHeartbeatSchema } from './worker-heartbeat.js';
import { ManifestRowSchema, PlatformFactsSchema, WorkerManifestSchema } from './worker-manifest.js';

/**
 * Every message schema by name (the rollout summary's is formats', RolloutFile v1), under the default limits: what an OpenAPI document lists under
 * `components.schemas` (convert each with `toJsonSchema`).
 */
export const PROTOCOL_SCHEMAS = Object.freeze({
  RolloutRequest: RolloutRequestSchema,
  LatentShape: LatentShapeSchema,
  TextEmbedsRef: TextEmbedsRefSchema,
  Constraints: ConstraintsSchema,
  WeightRequirements: WeightRequirementsSchema,
  Requirements: RequirementsSchema,
  LaneSpec: LaneSpecSchema,
  ManifestRow: ManifestRowSchema,
  PlatformFacts: PlatformFactsSchema,
  WorkerManifest: WorkerManifestSchema,
  WorkerHeartbeat: WorkerHeartbeatSchema,
  RolloutJob: RolloutJobSchema,
  WeightSync: WeightSyncSchema,
  SyncAck: SyncAckSchema,
  CaptureStats: CaptureStatsSchema,
  RolloutSummary: RolloutSummarySchema,
  JobProgress: JobProgressSchema,
  JobStatus: JobStatusSchema,
  RolloutListItem: RolloutListItemSchema,
  ErrorEnvelope: ErrorEnvelopeSchema,
});
