export { WAN21_1_3B, WAN21_MINI, createWan21Config } from './wan21-config.js';
export type { Wan21Config } from './wan21-config.js';
export { parameterCount, parameterShapes, textEncoderParameterShapes } from './parameter-shapes.js';
export { ropeTables } from './rope-tables.js';
export type { RopeTables, TokenGrid } from './rope-tables.js';
export { tokenize } from './tokenize.js';
export { initWeights } from './init-weights.js';
export type { Wan21Component } from './init-weights.js';
export { checkWeightsAgainstConfig } from './check-weights.js';
export { CHECKPOINT_WEIGHT_DTYPES, bindCheckpoint } from './checkpoint/bind-checkpoint.js';
export type { CheckpointEntry } from './checkpoint/bind-checkpoint.js';
export type { CheckpointKeys, CheckpointVocabulary } from './checkpoint/checkpoint-keys.js';
export { decodeCheckpointTensor } from './checkpoint/decode-checkpoint-tensor.js';
export { bindLoraAdapter } from './lora/bind-lora.js';
export type { LoraBinding, LoraLayer } from './lora/bind-lora.js';
export { loraScale } from './lora/lora-config.js';
export type { PeftLoraConfig } from './lora/lora-config.js';
export { LoraMerger } from './lora/lora-merger.js';
export { mergeLoraWeight } from './lora/merge-lora.js';
export type { LoraMergeInput } from './lora/merge-lora.js';
export { decodeWeights, encodeWeights, saveWeightsFile } from './weights/weights-file.js';
export type { WeightsContents } from './weights/weights-file.js';
export type { AttentionScratch } from './reference/attention.js';
export { ditForward } from './reference/dit-forward.js';
export type { DitForwardInputs, DitWorkspaceSlot } from './reference/dit-forward.js';
export { DitWorkspace } from './reference/dit-workspace.js';
export type { DitWorkspaceShape } from './reference/dit-workspace.js';
export type { LatentDims } from './reference/patchify.js';
export { textEncoderForward } from './reference/text-encoder-forward.js';
export type { TokenIds } from './reference/text-encoder-forward.js';
export { createDitReferenceFactory } from './components/reference-components.js';
export type {
  ComponentFactory,
  ReferenceFactoryOptions,
  ReferencePlacement,
} from './components/reference-components.js';
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
export { f32Tensor } from './loop/runtime-tensor.js';
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
  buildDitOnnx,
  buildTextEncoderOnnx,
  createOnnxArtifacts,
  exportOnnxFile,
  parseExportOnnxArgs,
} from './onnx/index.js';
export type {
  ExportOnnxFileOptions,
  ExportOnnxOptions,
  ExportOnnxResult,
  OnnxArtifacts,
  OnnxBuildOptions,
  OnnxCapturedDims,
  OnnxComponent,
  OnnxForm,
  OnnxInputDims,
} from './onnx/index.js';
