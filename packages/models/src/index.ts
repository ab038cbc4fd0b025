export {
  PAD_TOKEN,
  WAN21_1_3B,
  WAN21_MINI,
  createWan21Config,
  headDim,
  patchValues,
  validateWan21Config,
} from './wan21-config.js';
export type { Wan21Config } from './wan21-config.js';
export {
  TEXT_ENCODER_PREFIX,
  parameterCount,
  parameterShapes,
  shapeSize,
  textEncoderParameterShapes,
} from './parameter-shapes.js';
export { ropeAxisPairs, ropeTables } from './rope-tables.js';
export type { RopeTables, TokenGrid } from './rope-tables.js';
export { tokenize } from './tokenize.js';
export { TEXT_ENCODER_STREAM_BASE, initWeights } from './init-weights.js';
export type { Wan21Component } from './init-weights.js';
export { checkWeightsAgainstConfig, diffWeights } from './check-weights.js';
export type { WeightsMismatch, WrongShapeTensor } from './check-weights.js';
export {
  decodeWeights,
  encodeWeights,
  loadWeightsFile,
  saveWeightsFile,
} from './weights/weights-file.js';
export type { WeightsContents } from './weights/weights-file.js';
export { applyRope, attention, createAttentionScratch } from './reference/attention.js';
export type { AttentionDims, AttentionScratch } from './reference/attention.js';
export { ditForward, timestepSinusoid } from './reference/dit-forward.js';
export type { DitForwardInputs, DitWorkspaceSlot } from './reference/dit-forward.js';
export { DitWorkspace, ditWorkspaceShape } from './reference/dit-workspace.js';
export type { DitWorkspaceShape } from './reference/dit-workspace.js';
export { resolveDitWeights, resolveTextEncoderWeights } from './reference/dit-weights.js';
export type {
  AttentionWeights,
  DitBlockWeights,
  DitWeights,
  LinearWeights,
  TextEncoderWeights,
} from './reference/dit-weights.js';
export { patchify, unpatchify } from './reference/patchify.js';
export type { LatentDims, PatchOrder } from './reference/patchify.js';
export { textEncoderForward } from './reference/text-encoder-forward.js';
export type { TokenIds } from './reference/text-encoder-forward.js';
export { CPU_REFERENCE_SOURCE } from './components/reference-source.js';
export {
  createDitReferenceFactory,
  createTextEncoderReferenceFactory,
} from './components/reference-components.js';
export type {
  ComponentFactory,
  ReferenceFactoryOptions,
  ReferencePlacement,
} from './components/reference-components.js';
export {
  checkCaptureDims,
  checkReferenceInputs,
  runReferenceForward,
} from './components/reference-forward.js';
export type { ReferenceKind } from './components/reference-forward.js';
export { WorkerReferenceComponent } from './components/worker-reference-component.js';
export { ReferenceWorkerPool } from './reference-worker/reference-worker-pool.js';
export type {
  ReferenceCaptureRequest,
  ReferenceForwardRequest,
  ReferenceWorkerPoolOptions,
} from './reference-worker/reference-worker-pool.js';
export type {
  ReferenceCaptureInfo,
  ReferenceInputDims,
  ReferenceWorkerStats,
} from './reference-worker/reference-worker-protocol.js';
export {
  closeSharedReferencePool,
  configureSharedReferencePool,
  sharedReferencePool,
} from './reference-worker/shared-reference-pool.js';
export type {
  LatentDefaults,
  LoopSpec,
  ModelCard,
  ModelComponentSpec,
  SamplingDefaults,
} from './cards/model-card.js';
export { wan21MiniCard } from './cards/wan21-mini-card.js';
export { MODEL_CARDS, getModelCard } from './cards/model-cards.js';
export {
  EXPORT_ONNX_USAGE,
  GraphBuilder,
  MAX_CAPTURED_WEIGHT_BYTES,
  ONNX_GRAPH_VERSION,
  ONNX_IR_VERSION,
  ONNX_OPSET,
  SYMBOLIC_DIMS,
  buildDitOnnx,
  buildTextEncoderOnnx,
  createOnnxArtifacts,
  exportOnnx,
  exportOnnxFile,
  floatAttr,
  parseExportOnnxArgs,
} from './onnx/index.js';
export type {
  AttrInput,
  CapturedDims,
  ExportOnnxFileOptions,
  ExportOnnxOptions,
  ExportOnnxResult,
  OnnxArtifacts,
  OnnxBuildOptions,
  OnnxCapturedDims,
  OnnxComponent,
  OnnxForm,
  OnnxInputDims,
  Value,
} from './onnx/index.js';
