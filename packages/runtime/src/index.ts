export { AsyncLock } from './async-lock.js';
export { CaptureCounters, EAGER_BREAK_REASONS } from './capture-stats.js';
export type { CaptureStats, EagerBreakReason, ExecutionMode } from './capture-stats.js';
export { GraphCapturer } from './graph-capturer.js';
export type { DispatchOutcome, GraphCapturerOptions, GraphInfo } from './graph-capturer.js';
export { graphKeyString } from './graph-key.js';
export type { GraphKeyParts } from './graph-key.js';
export { DONE, isDone } from './loop-types.js';
export type {
  DrivenLoop,
  GraphKey,
  GraphWorkspace,
  InputDims,
  KernelLookup,
  LoopDone,
  ShapeSig,
  StepInfo,
  StepInstance,
  StepOverride,
  StepResult,
  WorkPlan,
} from './loop-types.js';
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
export type { RolloutResult } from './rollout-result.js';
export { runLoop } from './run-loop.js';
export type { RunLoopOptions } from './run-loop.js';
export { RuntimeLoopContext } from './runtime-loop-context.js';
export type { RuntimeLoopContextOptions, StepRecord } from './runtime-loop-context.js';
export { allocateLike, elementCount, sameDims } from './runtime-tensor.js';
export type { RuntimeDtype, RuntimeTensor, RuntimeTensorMap } from './runtime-tensor.js';
export { StaticWorkspace } from './static-workspace.js';
export type { StaticWorkspaceParts } from './static-workspace.js';
export { checkInterceptors } from './step-hooks.js';
export type { StepInterceptor, StepObserver } from './step-hooks.js';
export { WeightVersions } from './weight-versions.js';
export type { ResidentVersion } from './weight-versions.js';
export { createWan21DenoiseLoop, WAN21_DENOISE_LOOP_ID } from './wan21/denoise-loop.js';
export type { DenoiseOutput } from './wan21/denoise-loop.js';
export { DenoiseLoopState } from './wan21/denoise-state.js';
export { computeDenoiseStep, denoiseWorkspaceBytes } from './wan21/denoise-step.js';
export type { DenoiseGeometry, DenoiseInputs, DenoiseStepResult } from './wan21/denoise-step.js';
export { computeEncodeStep } from './wan21/encode-step.js';
export type { EncodeStepResult } from './wan21/encode-step.js';
export { resolveRolloutRequest } from './wan21/rollout-request.js';
export type {
  LatentSize,
  ResolvedRolloutRequest,
  RolloutRequest,
  Sampler,
} from './wan21/rollout-request.js';
export { KERNEL_OPS } from './wan21/solver-kernels.js';
export type {
  CfgCombineKernel,
  FlowMatchStepKernel,
  FlowSdeStepKernel,
} from './wan21/solver-kernels.js';
export { arenaBytes, eagerIO, graphIO } from './wan21/step-io.js';
export type { StepIO } from './wan21/step-io.js';
