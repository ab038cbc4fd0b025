// The generic core of @flowfleet/models: what every model card uses. A model family lives in its
// own folder with its own entry (e.g. `@flowfleet/models/<family>`); nothing here names a model.
export type {
  CardCapabilities,
  LoopSpec,
  ModelCard,
  ModelComponentSpec,
} from './cards/model-card.js';
export { DEFAULT_CARD_REGISTRY, createCardRegistry } from './cards/card-registry.js';
export type { CardRegistry } from './cards/card-registry.js';
export { DONE, isDone } from './loop/loop-types.js';
export type {
  DrivenLoop,
  GraphKey,
  GraphWorkspace,
  KernelLookup,
  LoopDone,
  ShapeSig,
  StepInfo,
  StepInstance,
  StepOverride,
  StepResult,
  WorkPlan,
} from './loop/loop-types.js';
export type { RolloutLoop, RolloutLoopRequest, RolloutTrajectory } from './loop/rollout-loop.js';
export { f32Tensor } from './loop/runtime-tensor.js';
export type { RuntimeTensor, RuntimeTensorMap } from './loop/runtime-tensor.js';
export { arenaBytes, eagerIO, graphIO } from './loop/step-io.js';
export type { StepIO } from './loop/step-io.js';
export {
  invalidRequest,
  resolvedRequestFields,
  resolveSamplingRequest,
} from './sampling/resolve-sampling-request.js';
export type {
  CfgRule,
  LatentSize,
  ResolvedSamplingRequest,
  Sampler,
  SamplingDefaults,
  SamplingRequest,
  TextEmbedding,
  TextEmbeddingSpec,
  TextEmbeddings,
  TextEmbedsRef,
} from './sampling/sampling-request.js';
export { bindCheckpoint } from './checkpoint/bind-checkpoint.js';
export type { CheckpointEntry } from './checkpoint/bind-checkpoint.js';
export type { CheckpointKeys, CheckpointVocabulary } from './checkpoint/checkpoint-keys.js';
export { decodeCheckpointTensor } from './checkpoint/decode-checkpoint-tensor.js';
export { loadCheckpoint } from './checkpoint/load-checkpoint.js';
export { bindLoraAdapter } from './lora/bind-lora.js';
export { loraScale } from './lora/lora-config.js';
export type { PeftLoraConfig } from './lora/lora-config.js';
export { LoraMerger } from './lora/lora-merger.js';
export { mergeLoraWeight } from './lora/merge-lora.js';
export type { LoraMergeInput } from './lora/merge-lora.js';
export { checkWeightsAgainstConfig } from './weights/check-weights.js';
export { decodeWeights, encodeWeights, saveWeightsFile } from './weights/weights-file.js';
export { exportOnnxFile } from './onnx/export-onnx.js';
export type { ExportOnnxFileOptions, ExportOnnxResult } from './onnx/export-onnx.js';
export { EXPORT_ONNX_USAGE, parseExportOnnxArgs } from './onnx/export-onnx-args.js';
