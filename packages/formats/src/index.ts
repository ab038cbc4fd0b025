// @flowfleet/formats: the one owner of every file format (a leaf: it imports `errors` only).

// safetensors
export {
  SAFETENSORS_DTYPES,
  SAFETENSORS_ITEM_BYTES,
  elementCount,
  isSafetensorsDtype,
} from './safetensors/dtypes.js';
export type {
  SafetensorsArrays,
  SafetensorsDtype,
  SafetensorsTensor,
} from './safetensors/dtypes.js';
export {
  bfloat16ToFloat32,
  float16ToFloat32,
  float32ToBfloat16,
  float32ToFloat16,
} from './safetensors/half-float.js';
export { readSafetensors } from './safetensors/read-safetensors.js';
export type {
  ReadSafetensorsOptions,
  SafetensorsContents,
} from './safetensors/read-safetensors.js';
export { writeSafetensors } from './safetensors/write-safetensors.js';
export type { SafetensorsTensors } from './safetensors/write-safetensors.js';
export { safetensorsLayout } from './safetensors/safetensors-layout.js';
export type {
  SafetensorsEntrySpec,
  SafetensorsLayout,
  SafetensorsSlot,
} from './safetensors/safetensors-layout.js';
export { SafetensorsFileWriter } from './safetensors/safetensors-file-writer.js';
export { planSafetensorsShards } from './safetensors/safetensors-shards.js';
export type {
  SafetensorsShardPlan,
  SafetensorsShardsPlan,
} from './safetensors/safetensors-shards.js';
export {
  MAX_HEADER_BYTES,
  parseSafetensorsHeader,
  readHeaderLength,
} from './safetensors/safetensors-header.js';
export { tensorFromBytes } from './safetensors/tensor-bytes.js';
export { SafetensorsDigester, digestSafetensors } from './safetensors/safetensors-digest.js';
export type { SafetensorsDigest } from './safetensors/safetensors-digest.js';
export {
  SAFETENSORS_INDEX_SUFFIX,
  openSafetensorsCheckpoint,
  parseSafetensorsIndex,
} from './safetensors/safetensors-checkpoint.js';
export type {
  CheckpointInvalidReason,
  SafetensorsCheckpoint,
  SafetensorsIndex,
  SafetensorsShardFile,
} from './safetensors/safetensors-checkpoint.js';
export type { SafetensorsEntry, SafetensorsHeader } from './safetensors/safetensors-header.js';
export { SafetensorsFileReader, readSafetensorsHeader } from './safetensors/safetensors-file.js';
export type {
  SafetensorsInvalidDetails,
  SafetensorsInvalidReason,
} from './safetensors/safetensors-error.js';

// RolloutFile v1
export {
  CfgRuleSchema,
  RESERVED_SUMMARY_KEYS,
  ROLLOUT_FORMAT,
  ROLLOUT_FORMAT_VERSION,
  RolloutMetadataSchema,
  RolloutSamplerSchema,
} from './rollout/rollout-metadata.js';
export type { CfgRule, RolloutMetadata } from './rollout/rollout-metadata.js';
export { rolloutTensorLayout } from './rollout/rollout-record.js';
export type { RolloutRecord, RolloutTensorSpec } from './rollout/rollout-record.js';
export { writeRolloutFile } from './rollout/write-rollout-file.js';
export { readRolloutFile } from './rollout/read-rollout-file.js';
export { RolloutFile } from './rollout/rollout-file.js';
export {
  CaptureStatsSchema,
  RolloutSummarySchema,
  RolloutTimingsSchema,
  recordSummaryFields,
  summarizeRollout,
} from './rollout/rollout-summary.js';
export type {
  CaptureStats,
  RolloutAttempt,
  RolloutSummary,
  RolloutTimings,
} from './rollout/rollout-summary.js';
export type { RolloutInvalidDetails, RolloutInvalidReason } from './rollout/rollout-error.js';

// ONNX
export { encodeOnnxModel } from './onnx/encode-onnx-model.js';
export { decodeOnnxModelSummary } from './onnx/decode-onnx-model.js';
export type {
  OnnxInitializerSummary,
  OnnxModelSummary,
  OnnxValueSummary,
} from './onnx/decode-onnx-model.js';
export { ONNX_DTYPE } from './onnx/onnx-types.js';
export type {
  OnnxAttribute,
  OnnxDim,
  OnnxElemType,
  OnnxGraph,
  OnnxModel,
  OnnxNode,
  OnnxOpsetImport,
  OnnxTensor,
  OnnxValueInfo,
} from './onnx/onnx-types.js';

// JSON
export { canonicalJson } from './canonical-json.js';
