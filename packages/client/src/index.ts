export { FlowfleetClient, createClient } from './flowfleet-client.js';
export type { EnqueueOptions, StatusWait, SyncWeightsOptions } from './flowfleet-client.js';
export { fileBody } from './file-body.js';
export type { HashedBody } from './file-body.js';
export { pushCheckpoint } from './push-checkpoint.js';
export { uploadPromptEmbeds } from './upload-prompt-embeds.js';
export type { BlobUploader, PromptEmbedding } from './upload-prompt-embeds.js';
export type {
  CheckpointPusher,
  LoraSyncOptions,
  PushCheckpointOptions,
  PushedCheckpoint,
} from './push-checkpoint.js';
export { ROUND_CONCURRENCY, enqueueRound } from './enqueue-round.js';
export type { RolloutEnqueuer, RoundCommon, RoundGroup } from './enqueue-round.js';
export { CLIENT_DEFAULTS, resolveClientOptions } from './client-options.js';
export type {
  FlowfleetClientOptions,
  ResolvedClientOptions,
  RetryOptions,
} from './client-options.js';
export { HttpTransport } from './http-transport.js';
export type { CallOptions, HttpRequest } from './http-transport.js';
export type { StreamedBody } from './wire.js';
export type { RetryEvent, RetryPolicy } from './retry-policy.js';
export { WAIT_DEFAULTS, jobFailedError, waitForJob } from './wait-for-job.js';
export type { JobStatusSource, WaitForOptions } from './wait-for-job.js';
export { WAIT_FOR_SYNC_DEFAULTS, waitForSync } from './wait-for-sync.js';
export type {
  SyncProgress,
  SyncStateSource,
  SyncTarget,
  WaitForSyncOptions,
} from './wait-for-sync.js';
// The result and weights formats are formats' (RolloutFile v1, safetensors), re-exported.
export {
  ROLLOUT_FORMAT,
  ROLLOUT_FORMAT_VERSION,
  RolloutFile,
  RolloutMetadataSchema,
  RolloutSummarySchema,
  readRolloutFile,
  readSafetensors,
  writeSafetensors,
} from '@flowfleet/formats';
export type {
  RolloutMetadata,
  RolloutRecord,
  RolloutSummary,
  SafetensorsArrays,
  SafetensorsContents,
  SafetensorsDtype,
  SafetensorsTensor,
} from '@flowfleet/formats';
export { sha256Hex } from './sha256-hex.js';
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
  ScalingSchema,
  StoredBlobSchema,
  SyncAcceptedSchema,
  WeightReportSchema,
} from '@flowfleet/protocol';
export type {
  CancelledRollout,
  ClassScaling,
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
  Scaling,
  StoredBlob,
  SyncAccepted,
  WeightReport,
  WeightVersionReport,
} from '@flowfleet/protocol';
