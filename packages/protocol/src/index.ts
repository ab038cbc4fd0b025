// The error base and code table live in the leaf package @flowfleet/errors so that registry and
// platform can raise coded errors without depending on zod (ADR 002); protocol re-exports them as
// part of the wire contract.
export { ERROR_CODES, FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
export type { ErrorCode, ErrorCodeInfo, ErrorEnvelope } from '@flowfleet/errors';
export { ErrorEnvelopeSchema, errorEnvelopeOf } from './error-envelope.js';

export { DEFAULT_LIMITS, LIMIT_NAMES, publishedLimitsOf, resolveLimits } from './limits.js';
export type { Limits, PublishedLimits } from './limits.js';
export { FleetLimits } from './fleet-limits.js';
export type { FleetLimitsOptions } from './fleet-limits.js';
export {
  ComponentIdSchema,
  DEVICES,
  DeviceSchema,
  IdSchema,
  ModelIdSchema,
  OpIdSchema,
  SamplerSchema,
  SeedSchema,
  Sha256Schema,
  TimestampSchema,
  WeightVersionSchema,
} from './atoms.js';
export type { Device, Sampler } from './atoms.js';
export {
  CpuArchSchema,
  CudaArchSchema,
  MinArchSchema,
  archAtLeast,
  isArchReachable,
} from './arch.js';
export type { MinArch } from './arch.js';
export {
  WeightRequirementSchema,
  WeightRequirementsSchema,
  isWeightRequirementMet,
  unmetWeights,
} from './weight-requirement.js';
export type {
  ResolvedWeightRequirement,
  ResolvedWeightRequirements,
  UnmetWeight,
  WeightRequirement,
  WeightRequirements,
} from './weight-requirement.js';
export {
  ConstraintsSchema,
  DEFAULT_STEPS,
  LatentShapeSchema,
  ROLLOUT_DEFAULTS,
  RolloutRequestSchema,
  groupLatentElements,
  rolloutRequestSchema,
} from './rollout-request.js';
export type {
  RolloutDefaultsFor,
  RolloutRequestDefaults,
  Constraints,
  LatentShape,
  RolloutRequest,
  RolloutRequestInput,
} from './rollout-request.js';
export {
  LANE_PREFIX,
  RequirementsSchema,
  canonicalRequirements,
  isLaneName,
  laneForRequirements,
  laneName,
  requirementsFor,
  requirementsHash,
} from './requirements.js';
export type { ModelCapabilities, Requirements } from './requirements.js';
export { LaneSpecSchema } from './lane-spec.js';
export type { LaneSpec } from './lane-spec.js';
export { ManifestRowSchema, PlatformFactsSchema, WorkerManifestSchema } from './worker-manifest.js';
export type { ManifestRow, PlatformFacts, WorkerManifest } from './worker-manifest.js';
export { WorkerHeartbeatSchema } from './worker-heartbeat.js';
export type { WorkerHeartbeat } from './worker-heartbeat.js';
export { manifestSatisfies } from './manifest-satisfies.js';
export type { Satisfaction } from './manifest-satisfies.js';
export {
  SyncAckSchema,
  SyncStatusSchema,
  WeightSyncSchema,
  weightSyncSchema,
} from './weight-sync.js';
export type { SyncAck, SyncStatus, WeightSync } from './weight-sync.js';
export {
  JobProgressSchema,
  JobStateSchema,
  JobStatusSchema,
  JobViewSchema,
  RolloutListItemSchema,
} from './job-status.js';
export type { JobProgress, JobState, JobStatus, JobView, RolloutListItem } from './job-status.js';
export {
  RolloutJobSchema,
  rolloutJobFor,
  rolloutJobSchema,
  staticWeightRequirements,
} from './rollout-job.js';
export { laneOfJobId, newRolloutJobId } from './rollout-job-id.js';
export type { RolloutJob, RolloutJobOptions } from './rollout-job.js';
export { fleetKeyPart, fleetKeys } from './fleet-keys.js';
export type { FleetKeys } from './fleet-keys.js';
export { formatPath, parseOrThrow, validationError } from './parse-or-throw.js';
export type { ValidationDetails, ValidationIssue } from './parse-or-throw.js';
export { toJsonSchema } from './json-schema.js';
export type { JsonSchemaOptions } from './json-schema.js';
export { PROTOCOL_SCHEMAS } from './schemas.js';
export {
  EnqueuedRolloutSchema,
  FleetSchema,
  HealthSchema,
  LaneCapacitySchema,
  LanesSchema,
  MatrixSchema,
  OpenApiDocumentSchema,
  RESULT_FILES,
  ResultUploadSchema,
  RolloutListSchema,
  SUMMARY_BYTES_HEADER,
  IDEMPOTENCY_KEY_HEADER,
  IdempotencyKeySchema,
  StoredBlobSchema,
  SyncAcceptedSchema,
  WeightReportSchema,
} from './api-schemas.js';
export type {
  EnqueuedRollout,
  Fleet,
  FleetWorker,
  Health,
  LaneCapacity,
  Lanes,
  Matrix,
  OpenApiDocument,
  ResultFile,
  ResultUpload,
  RolloutList,
  StoredBlob,
  SyncAccepted,
  WeightReport,
  WeightVersionReport,
} from './api-schemas.js';
