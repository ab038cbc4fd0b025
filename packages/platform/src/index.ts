export type { ComponentBuild } from './build-component.js';
export type { CapabilityMatrix, MatrixPick } from './capability-matrix.js';
export type {
  CapturedForward,
  ComponentForward,
  InputDims,
  OnnxArtifacts,
  OnnxGraphRequest,
  TensorData,
  TensorDtype,
  TensorMap,
  WeightSet,
} from './component-types.js';
export { createPlatform } from './create-platform.js';
export type { Platform, PlatformOptions } from './create-platform.js';
export {
  DEVICE_CHOICES,
  DEVICE_ENV,
  detectPlatform,
  PLATFORM_OVERRIDE_ENV,
} from './detect-platform.js';
export type { DeviceChoice, PlatformProbes } from './detect-platform.js';
export {
  isSoftwareAdapter,
  requestWebGpuAdapter,
  SOFTWARE_ADAPTER_ARCH,
  webgpuArch,
} from './webgpu-adapter.js';
export type { WebGpuAdapterInfo, WebGpuAdapterProbe } from './webgpu-adapter.js';
export { DivergenceReporter, firstDivergence } from './divergence-reporter.js';
export type { Divergence, DivergenceMode, TapRecord } from './divergence-reporter.js';
export { archChain } from './fallback-chains.js';
export type { ChainOrigin } from './fallback-chains.js';
export { KernelTable } from './kernel-table.js';
export type { KernelResolution } from './kernel-table.js';
export { bitIdentical, within } from './parity.js';
export type { FloatArray, ParityTolerance, WithinResult } from './parity.js';
export {
  isSharedTensor,
  sharedFloat32Array,
  sharedTensor,
  sharedTensors,
  unsharedTensor,
} from './shared-tensors.js';
export { moduleWorkerUrl } from './worker-threads/spawn-module-worker.js';
export { ComputePool } from './worker-threads/compute-pool.js';
export type {
  ComputeHandlerModule,
  ComputePoolOptions,
  DispatchOptions,
} from './worker-threads/compute-pool.js';
export type { ComputeThread } from './worker-threads/compute-thread-handle.js';
export type { ComputeThreadStats } from './worker-threads/compute-protocol.js';
export { packedTensors, tensorsReply } from './worker-threads/compute-handler.js';
export type {
  ComputeHandler,
  ComputeHandlerFactory,
  ComputeThreadContext,
  TransferReply,
} from './worker-threads/compute-handler.js';
export { isDevice, SOLVER_OP, SOLVER_OPS } from './platform-types.js';
export type {
  ComponentBuildContext,
  ComponentSpec,
  Device,
  PlatformFacts,
} from './platform-types.js';
