export type { CaptureStats, EagerBreakReason, ExecutionMode } from './capture-stats.js';
export { GraphCapturer } from './graph-capturer.js';
export type { DispatchOutcome, GraphCapturerOptions, GraphInfo } from './graph-capturer.js';
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
export type { StepInterceptor, StepObserver } from './step-hooks.js';
