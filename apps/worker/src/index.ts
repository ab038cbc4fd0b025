export { createWorker } from './create-worker.js';
export { rolloutOutput } from './jobs/rollout-output.js';
export type { RolloutOutput } from './jobs/rollout-output.js';
export type { FlowfleetWorker, WorkerStats } from './flowfleet-worker.js';
export { DEFAULT_LOCK_SETTINGS, DEFAULT_TIMINGS, resolveWorkerOptions } from './worker-options.js';
export type {
  BackendChoice,
  LockSettings,
  ResolvedWorkerOptions,
  WorkerOptions,
} from './worker-options.js';
export { defaultWorkerId, parseWorkerEnv, workerEnvSchema, workerOptionsFromEnv } from './env.js';
export type { EnvIssue, WorkerEnv } from './env.js';
export { EXTRA_KERNEL_SOURCE, parseExtraKernels } from './compute/extra-kernels.js';
export type { ExtraKernel } from './compute/extra-kernels.js';
export { buildManifest } from './fleet/manifest.js';
export type { ManifestInput } from './fleet/manifest.js';
export {
  INITIAL_WEIGHTS_SEED,
  INITIAL_WEIGHTS_VERSION,
  componentShapes,
} from './compute/model-host.js';
export { verifyWeightsBlob } from './weights/blob-verifier.js';
export type { ExpectedBlob, RefusalReason } from './weights/blob-verifier.js';
export { isUnrecoverable, jobFailureOf } from './jobs/job-failure.js';
export { toJobError } from './queue/bullmq/bullmq-job-error.js';
export type { HeldJob, JobFailure, JobQueue, LaneConsumer } from './queue/job-queue.js';
export { createBullmqJobQueue } from './queue/bullmq/bullmq-job-queue.js';
export type { BullmqJobQueueOptions } from './queue/bullmq/bullmq-job-queue.js';
export { ConcurrencyGate } from './lanes/concurrency-gate.js';
export { workerKeys } from './keys.js';
export { LOAD_BEAT_INTERVAL_MS } from './fleet/worker-registration.js';
export type { WorkerKeys } from './keys.js';
export { WORKER_VERSION } from './version.js';
