export { buildComponent, CARD_FACTORY_SOURCE } from './build-component.js';
export type { ComponentBuild } from './build-component.js';
export { componentMatrix, kernelMatrix } from './capability-matrix.js';
export type { CapabilityMatrix, MatrixPick } from './capability-matrix.js';
export type {
  CapturedForward,
  ComponentForward,
  TensorData,
  TensorDtype,
  TensorMap,
  WeightSet,
} from './component-types.js';
export { classifyCpu, parseCpuinfoFlags } from './cpu-arch.js';
export type { CpuClassification } from './cpu-arch.js';
export { createPlatform } from './create-platform.js';
export type { Platform, PlatformOptions } from './create-platform.js';
export {
  detectPlatform,
  hostProbes,
  ORT_CUDA_PROVIDER_ENV,
  ortCudaProviderPath,
  PLATFORM_OVERRIDE_ENV,
  platformFromProbes,
} from './detect-platform.js';
export type { PlatformProbes } from './detect-platform.js';
export { DivergenceReporter, firstDivergence } from './divergence-reporter.js';
export type { Divergence, DivergenceMode, TapRecord } from './divergence-reporter.js';
export {
  archChain,
  componentCandidates,
  deviceArchPairs,
  deviceChain,
  KNOWN_CUDA_ARCHS,
  kernelCandidates,
  PORTABLE_ARCHS,
  variantChain,
  X86_64_LEVELS,
} from './fallback-chains.js';
export type { ChainOrigin } from './fallback-chains.js';
export { describeRejected, KernelTable } from './kernel-table.js';
export type { KernelResolution } from './kernel-table.js';
export {
  assertSameShape,
  bitIdentical,
  elementDifference,
  firstBitDifference,
  within,
} from './parity.js';
export type { FloatArray, ParityTolerance, WithinResult } from './parity.js';
export { moduleWorkerUrl } from './worker-threads/spawn-module-worker.js';
export { ComputePool } from './worker-threads/compute-pool.js';
export type {
  ComputeHandlerModule,
  ComputePoolOptions,
  DispatchOptions,
} from './worker-threads/compute-pool.js';
export type { ComputeThread } from './worker-threads/compute-thread-handle.js';
export type { ComputeThreadStats } from './worker-threads/compute-protocol.js';
export {
  COMPUTE_HANDLER_EXPORT,
  packedTensors,
  tensorsReply,
  transferReply,
} from './worker-threads/compute-handler.js';
export type {
  ComputeHandler,
  ComputeHandlerFactory,
  ComputeThreadContext,
  TransferReply,
} from './worker-threads/compute-handler.js';
export { DEVICES, isDevice, SOLVER_OP, SOLVER_OPS } from './platform-types.js';
export type {
  ComponentBuildContext,
  ComponentSpec,
  Device,
  PlatformFacts,
  SolverOp,
} from './platform-types.js';
