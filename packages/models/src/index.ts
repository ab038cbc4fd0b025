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
export { ReferenceCompute } from './reference-worker/reference-compute.js';
export type {
  ReferenceCaptureRequest,
  ReferenceForwardRequest,
} from './reference-worker/reference-compute.js';
export type {
  ReferenceCaptureInfo,
  ReferenceInputDims,
  ReferenceThreadStats,
} from './reference-worker/reference-protocol.js';
export type {
  CardCapabilities,
  LoopSpec,
  ModelCard,
  ModelComponentSpec,
} from './cards/model-card.js';
export { DEFAULT_CARD_REGISTRY, createCardRegistry } from './cards/card-registry.js';
export type { CardRegistry } from './cards/card-registry.js';
export { wan21MiniCard } from './cards/wan21-mini-card.js';
export { createWan21Card } from './cards/wan21/wan21-card.js';
export type { Wan21CardOptions, Wan21ComponentId } from './cards/wan21/wan21-card.js';
export { WAN21_DENOISE_LOOP_ID } from './cards/wan21/denoise-loop.js';
export { DONE, isDone } from './loop/loop-types.js';
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
} from './loop/loop-types.js';
export type { RolloutLoop, RolloutTrajectory } from './loop/rollout-loop.js';
export { asComponentTensor, f32Tensor } from './loop/runtime-tensor.js';
export type { RuntimeDtype, RuntimeTensor, RuntimeTensorMap } from './loop/runtime-tensor.js';
export { arenaBytes, eagerIO, graphIO } from './loop/step-io.js';
export type { StepIO } from './loop/step-io.js';
export { invalidRequest, resolveSamplingRequest } from './sampling/resolve-sampling-request.js';
export type { SamplingRequestDefaults } from './sampling/resolve-sampling-request.js';
export { CFG_RULES, runsUnconditionalBranch } from './sampling/sampling-request.js';
export type {
  CfgRule,
  LatentSize,
  ResolvedSamplingRequest,
  Sampler,
  SamplingDefaults,
  SamplingRequest,
} from './sampling/sampling-request.js';
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
