// The wan21 family's entry, `@flowfleet/models/wan21`: the Wan2.1 config, its cards and the pieces
// tests, benchmarks and scripts reach directly. Product code reaches the cards by model id through
// the card registry (`@flowfleet/models`), never through this entry.
export { WAN21_1_3B, WAN21_MINI, createWan21Config } from './wan21-config.js';
export type { Wan21Config } from './wan21-config.js';
export { parameterCount, parameterShapes } from './parameter-shapes.js';
export { tokenize } from './tokenize.js';
export { initWeights } from './init-weights.js';
export {
  DEFAULT_MAX_SHARD_BYTES,
  diffusersDitKey,
  writeWan21DitCheckpoint,
} from './checkpoint/write-dit-checkpoint.js';
export type {
  Wan21CheckpointDtype,
  Wan21DitLayout,
  WriteDitCheckpointOptions,
  WrittenDitCheckpoint,
} from './checkpoint/write-dit-checkpoint.js';
export { wan21MiniCard, wan21MiniEmbedsCard, wan21MiniVaeCard } from './wan21-mini-card.js';
export { WAN21_T2V_1_3B_RECIPE, wan21T2v13bCard } from './wan21-t2v-1-3b-card.js';
export { padTextEmbedding } from './text-embeddings.js';
export { createWan21Card } from './wan21-card.js';
export type { Wan21CardOptions, Wan21ComponentId, Wan21TextInput } from './wan21-card.js';
export { ditForward } from './reference/dit-forward.js';
export { textEncoderForward } from './reference/text-encoder-forward.js';
export { createDitReferenceFactory } from './components/reference-components.js';
export { buildDitOnnx } from './onnx/dit-graph.js';
export { buildTextEncoderOnnx } from './onnx/text-encoder-graph.js';
export { createOnnxArtifacts } from './onnx/onnx-artifacts.js';
export type { OnnxBuildOptions } from './onnx/onnx-options.js';
export {
  WAN21_VAE,
  WAN21_VAE_MINI,
  validateWanVaeConfig,
  vaeFrameCount,
} from './vae/vae-config.js';
export type { WanVaeConfig } from './vae/vae-config.js';
export { vaeCacheSlots, vaeDecoderParameters, vaeParameterShapes } from './vae/vae-plan.js';
export type { VaeCacheSlot, VaeParameter } from './vae/vae-plan.js';
export { buildVaeDecoderOnnx, VAE_IO } from './vae/vae-graph.js';
export type { VaeOnnxOptions } from './vae/vae-graph.js';
export { decodeVaeClip, VaeClipDecode, vaeStepInputDims } from './vae/vae-clip-decode.js';
export { createVaeDecoderComponent, VAE_DECODER_KIND } from './vae/vae-component.js';
export { createVaeFrameDecoder, vaeLatentFramesFor } from './vae/vae-frame-decoder.js';
export { initVaeDecoderWeights } from './vae/vae-weights.js';
