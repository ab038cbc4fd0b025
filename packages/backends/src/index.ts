export { resolveRegistries } from './backend-registries.js';
export type { BackendRegistries, ResolvedRegistries } from './backend-registries.js';
export { registerCpuBackend } from './cpu-backend.js';
export { declareOrtCells, ORT_PARITY_TOLERANCE, ORT_WEBGPU_PARITY_TOLERANCE } from './ort-cells.js';
export type {
  DeclareOrtCellsOptions,
  OrtCellProvider,
  OrtHostFacts,
  OrtProbeResult,
  OrtProviderBuilder,
} from './ort-cells.js';
export { loadOrt } from './ort/load-ort.js';
export type { Ort } from './ort/load-ort.js';
export { ortSessionOptions } from './ort/session-options.js';
export type { OrtProvider, OrtSessionSettings } from './ort/session-options.js';
export { OrtSessions } from './ort/ort-sessions.js';
export type {
  OrtCreateSessionOptions,
  OrtRunOptions,
  OrtSessionsOptions,
} from './ort/ort-sessions.js';
export type { OrtThreadStats, ProviderProbe } from './ort/ort-protocol.js';
export { createOrtComponentBuilder, ortCellWiring } from './ort/ort-component.js';
export type { OrtComponentBuilder, OrtComponentBuilderOptions } from './ort/ort-component.js';
export { onnxArtifactsOf } from './ort/onnx-artifacts.js';
export type { OrtComponentSpec } from './ort/onnx-artifacts.js';
export { PROBE_MODEL_BYTES } from './ort/probe-model.js';
