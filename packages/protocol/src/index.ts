// The error base and code table live in the leaf package @flowfleet/errors (ADR 002).
export { ErrorEnvelopeSchema, errorEnvelopeOf } from './error-envelope.js';

export { DEFAULT_LIMITS, LIMIT_NAMES, publishedLimitsOf, resolveLimits } from './limits.js';
export type { Limits, PublishedLimits } from './limits.js';
export { FleetLimits } from './fleet-limits.js';
export type { FleetLimitsOptions } from './fleet-limits.js';
export { ComponentIdSchema, IdSchema, MAX_WEIGHT_VERSION, Sha256Schema } from './atoms.js';
export { isWeightRequirementMet, unmetWeights } from './weight-requirement.js';
export { resultMismatches } from './result-answers-job.js';
export type { ResultMismatch } from './result-answers-job.js';
export type {
  ResolvedWeightRequirement,
  ResolvedWeightRequirements,
  UnmetWeight,
  WeightRequirement,
  WeightRequirements,
} from './weight-requirement.js';
export {
  latentLimitIssue,
  RolloutRequestSchema,
  rolloutRequestSchema,
  TextEmbedsRefSchema,
} from './rollout-request.js';
export type { RolloutRequest, RolloutRequestInput } from './rollout-request.js';
export { laneForRequirements, requirementsFor } from './requirements.js';
export type { ModelCapabilities, Requirements } from './requirements.js';
export { LaneSpecSchema } from './lane-spec.js';
export type { LaneSpec } from './lane-spec.js';
export { WorkerManifestSchema } from './worker-manifest.js';
export type { ManifestRow, WorkerManifest } from './worker-manifest.js';
export { manifestDigestOf, WorkerHeartbeatSchema } from './worker-heartbeat.js';
export type { WorkerHeartbeat } from './worker-heartbeat.js';
export { manifestSatisfies, platformReasons } from './manifest-satisfies.js';
export {
  AdapterSchema,
  archAtLeast,
  isSoftwareAdapterPlatform,
  SOFTWARE_ADAPTER_ARCH,
} from './arch.js';
export type { Adapter } from './arch.js';
export { ClassScalingSchema, DeviceClassSchema, ScalingSchema, deviceClassOf } from './scaling.js';
export type { ClassScaling, DeviceClass, Scaling } from './scaling.js';
export type { Satisfaction } from './manifest-satisfies.js';
export { SyncAckSchema, WeightSyncSchema, weightSyncSchema } from './weight-sync.js';
export {
  COORDINATOR_SOURCE,
  FANOUT_PEER_SOURCES,
  FANOUT_PLAN_TTL_MS,
  FanoutPlanSchema,
  MAX_ACK_FALLBACKS,
  fanoutChain,
  fanoutChunkBytes,
  fanoutSourcesOf,
} from './weight-fanout.js';
export type { FanoutPeer, FanoutPlan, SyncFallback } from './weight-fanout.js';
export { EgressBucket, throttled } from './egress-bucket.js';
export {
  LoraRecordSchema,
  MAX_LORA_SCALE,
  MAX_WEIGHT_SHARDS,
  loraAlphaProblem,
  ManifestTensorSchema,
  PeftLoraConfigSchema,
  WEIGHT_MANIFEST_FORMAT,
  WeightBlobSchema,
  WeightManifestSchema,
  WeightVersionRecordSchema,
} from './weight-record.js';
export type {
  LoraRecord,
  ManifestTensor,
  PeftLoraConfigJson,
  WeightBlob,
  WeightManifest,
  WeightVersionRecord,
} from './weight-record.js';
export type { SyncAck, SyncStatus, WeightSync } from './weight-sync.js';
export {
  JobProgressSchema,
  JobStateSchema,
  JobStatusSchema,
  JobViewSchema,
  LaneNameSchema,
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
export { parseOrThrow, validationError } from './parse-or-throw.js';
export type { ValidationDetails, ValidationIssue } from './parse-or-throw.js';
export { jsonFromRedis, parseRedisJson } from './redis-json.js';
export { toJsonSchema } from './json-schema.js';
export type { JsonSchemaOptions } from './json-schema.js';
export { PROTOCOL_SCHEMAS } from './schemas.js';
export {
  CancelledRolloutSchema,
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
  JOB_LOCK_HEADER,
  IDEMPOTENCY_KEY_HEADER,
  IdempotencyKeySchema,
  StoredBlobSchema,
  SyncAcceptedSchema,
  VersionStatusSchema,
  WeightReportSchema,
} from './api-schemas.js';
export type {
  CancelledRollout,
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
  StoredBlob,
  SyncAccepted,
  VersionStatus,
  WeightReport,
  WeightVersionReport,
} from './api-schemas.js';
