export { createCoordinator, redactUrl } from './create-coordinator.js';
export type { Coordinator, CoordinatorOptions } from './create-coordinator.js';
export { BearerAuth } from './auth.js';
export type { CoordinatorTokens, Role } from './auth.js';
export { collectRoutes } from './route-table.js';
export type { RouteDoc, RouteInfo } from './route-table.js';
export { coordinatorKeys } from './keys.js';
export type { CoordinatorKeys } from './keys.js';
export { coordinatorEnvSchema, limitsFromEnv, parseCoordinatorEnv, tokensFromEnv } from './env.js';
export type { CoordinatorEnv } from './env.js';
export { assertNoEviction, readEvictionPolicy } from './eviction-policy.js';
export { FsBlobStore } from './blob-store.js';
export type {
  BlobStore,
  ByteSource,
  OpenedObject,
  ResultWrite,
  StoredObject,
} from './blob-store.js';
export { capabilityMatrix, laneCapacities, summarizeWorkers } from './fleet-views.js';
export { versionStatus } from './weight-registry.js';
export type { VersionStatus } from './weight-registry.js';
export { JOB_ATTEMPTS, JOB_RETENTION_SECONDS } from './rollout-service.js';
export { admissionSchema, admitRolloutRequest, cardDefaults } from './rollout-admission.js';
export type { AdmittedRollout } from './rollout-admission.js';
export { FleetCapacity, judgeWorkers } from './fleet-capacity.js';
export type { CapacityCheck, WorkerVerdict } from './fleet-capacity.js';
export { COORDINATOR_VERSION } from './version.js';
export { RolloutListQuerySchema } from './dashboard/rollout-list.js';
export { publishLimits } from './limits-publisher.js';
export { SyncBodySchema } from './api-schemas.js';
// The response schemas live in @flowfleet/protocol (shared with the client); re-exported here so
// existing imports from the coordinator keep working. RESULT_FILES/ResultFile likewise.
export {
  EnqueuedRolloutSchema,
  FleetSchema,
  HealthSchema,
  LanesSchema,
  MatrixSchema,
  RESULT_FILES,
  ResultUploadSchema,
  RolloutListItemSchema,
  RolloutListSchema,
  StoredBlobSchema,
  SyncAcceptedSchema,
  WeightReportSchema,
} from '@flowfleet/protocol';
export type { ResultFile } from '@flowfleet/protocol';
