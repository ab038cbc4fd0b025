export { createWorker } from './create-worker.js';
export { rolloutOutput } from './rollout-output.js';
export type { RolloutOutput } from './rollout-output.js';
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
export { EXTRA_KERNEL_SOURCE, parseExtraKernels } from './extra-kernels.js';
export type { ExtraKernel } from './extra-kernels.js';
export { buildManifest } from './manifest.js';
export type { ManifestInput } from './manifest.js';
export { INITIAL_WEIGHTS_SEED, INITIAL_WEIGHTS_VERSION, componentShapes } from './model-host.js';
export { verifyWeightsBlob } from './blob-verifier.js';
export type { ExpectedBlob, RefusalReason } from './blob-verifier.js';
export { isUnrecoverable, toJobError } from './job-failure.js';
export { ConcurrencyGate } from './concurrency-gate.js';
export { workerKeys } from './keys.js';
export { LOAD_BEAT_INTERVAL_MS } from './worker-registration.js';
export type { WorkerKeys } from './keys.js';
export { WORKER_VERSION } from './version.js';
