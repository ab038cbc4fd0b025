export { AsyncLock } from './async-lock.js';
export { CaptureCounters, EAGER_BREAK_REASONS } from './capture-stats.js';
export type { CaptureStats, EagerBreakReason, ExecutionMode } from './capture-stats.js';
export { GraphCapturer } from './graph-capturer.js';
export type { DispatchOutcome, GraphCapturerOptions, GraphInfo } from './graph-capturer.js';
export { graphKeyString } from './graph-key.js';
export type { GraphKeyParts } from './graph-key.js';
export { ModelInstance } from './model-instance.js';
export type {
  InitialWeights,
  InstancePlatform,
  ModelInstanceOptions,
  WeightLease,
} from './model-instance.js';
export { createNanWatch } from './nan-watch.js';
export { createResidualSkip } from './residual-skip.js';
export type { ResidualSkip, ResidualSkipOptions } from './residual-skip.js';
export { runRollout } from './rollout-executor.js';
export type { RolloutRequest } from './rollout-request.js';
export type { RolloutResult } from './rollout-result.js';
export { runLoop } from './run-loop.js';
export type { RunLoopOptions } from './run-loop.js';
export { RuntimeLoopContext } from './runtime-loop-context.js';
export type { RuntimeLoopContextOptions, StepRecord } from './runtime-loop-context.js';
export { StaticWorkspace } from './static-workspace.js';
export type { StaticWorkspaceParts } from './static-workspace.js';
export { checkInterceptors } from './step-hooks.js';
export type { StepInterceptor, StepObserver } from './step-hooks.js';
export { WeightVersions } from './weight-versions.js';
export type { ResidentVersion } from './weight-versions.js';
