export { createCoordinator } from './create-coordinator.js';
export type { Coordinator, CoordinatorOptions } from './create-coordinator.js';
export type { CoordinatorTokens } from './env.js';
export type { Role } from '@flowfleet/protocol/http-edge';
export type { RouteDoc, RouteInfo } from './route-table.js';
export { coordinatorKeys } from './keys.js';
export type { CoordinatorKeys } from './keys.js';
export { coordinatorEnvSchema, limitsFromEnv, parseCoordinatorEnv } from './env.js';
export type { CoordinatorEnv } from './env.js';
export { FsBlobStore } from './blob-store.js';
export type {
  BlobStore,
  ByteRange,
  ByteSource,
  OpenedObject,
  ResultWrite,
  StoredEntry,
  StoredObject,
} from './blob-store.js';
export { DEFAULT_RETENTION } from './retention/retention-settings.js';
export type { RetentionSettings } from './retention/retention-settings.js';
export type { SweepReport } from './retention/retention-sweeper.js';
export type { BlobDigest } from './blob-digest.js';
export { admissionSchema, admitRolloutRequest } from './rollout-admission.js';
export type { AdmittedRollout } from './rollout-admission.js';
export { FleetCapacity } from './fleet-capacity.js';
export { FleetReader, READ_DUTY_FACTOR } from './fleet-reader.js';
export type { FleetReaderOptions, WorkerView } from './fleet-reader.js';
export type { CapacityCheck, WorkerVerdict } from './fleet-capacity.js';
export { publishLimits } from './limits-publisher.js';

// The response schemas live in @flowfleet/protocol (shared with the client); re-exported here so
// existing imports from the coordinator (tests, bench) keep working. ResultFile likewise.
export {
  EnqueuedRolloutSchema,
  FleetSchema,
  LanesSchema,
  MatrixSchema,
  ResultUploadSchema,
  RolloutListSchema,
  SyncAcceptedSchema,
  WeightReportSchema,
} from '@flowfleet/protocol';
export type { ResultFile } from '@flowfleet/protocol';
