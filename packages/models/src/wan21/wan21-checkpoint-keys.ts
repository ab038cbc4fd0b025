import { renameVocabulary, type CheckpointKeys } from '../checkpoint/checkpoint-keys.js';

/**
 * The renames of diffusers' `scripts/convert_wan_to_diffusers.py` (TRANSFORMER_KEYS_RENAME_DICT,
 * the Wan2.1 T2V/I2V transformer), in its order: the script replaces every occurrence of each key
 * in turn, and so does `renameVocabulary`. The norm2/norm3 swap goes through a placeholder, as in
 * the script: Wan2.1 applies its norms in the order norm1, norm3 (cross-attention, affine), norm2,
 * diffusers names them in order, so Wan's `norm3` is diffusers' `norm2`. The I2V rules name
 * tensors this card does not have; they are kept so the list stays the script's.
 */
const DIFFUSERS_RENAMES: readonly (readonly [string, string])[] = Object.freeze([
  ['time_embedding.0', 'condition_embedder.time_embedder.linear_1'],
  ['time_embedding.2', 'condition_embedder.time_embedder.linear_2'],
  ['text_embedding.0', 'condition_embedder.text_embedder.linear_1'],
  ['text_embedding.2', 'condition_embedder.text_embedder.linear_2'],
  ['time_projection.1', 'condition_embedder.time_proj'],
  ['head.modulation', 'scale_shift_table'],
  ['head.head', 'proj_out'],
  ['modulation', 'scale_shift_table'],
  ['ffn.0', 'ffn.net.0.proj'],
  ['ffn.2', 'ffn.net.2'],
  ['norm2', 'norm__placeholder'],
  ['norm3', 'norm2'],
  ['norm__placeholder', 'norm3'],
  ['img_emb.proj.0', 'condition_embedder.image_embedder.norm1'],
  ['img_emb.proj.1', 'condition_embedder.image_embedder.ff.net.0.proj'],
  ['img_emb.proj.3', 'condition_embedder.image_embedder.ff.net.2'],
  ['img_emb.proj.4', 'condition_embedder.image_embedder.norm2'],
  ['img_emb.emb_pos', 'condition_embedder.image_embedder.pos_embed'],
  ['self_attn.q', 'attn1.to_q'],
  ['self_attn.k', 'attn1.to_k'],
  ['self_attn.v', 'attn1.to_v'],
  ['self_attn.o', 'attn1.to_out.0'],
  ['self_attn.norm_q', 'attn1.norm_q'],
  ['self_attn.norm_k', 'attn1.norm_k'],
  ['cross_attn.q', 'attn2.to_q'],
  ['cross_attn.k', 'attn2.to_k'],
  ['cross_attn.v', 'attn2.to_v'],
  ['cross_attn.o', 'attn2.to_out.0'],
  ['cross_attn.norm_q', 'attn2.norm_q'],
  ['cross_attn.norm_k', 'attn2.norm_k'],
  ['attn2.to_k_img', 'attn2.add_k_proj'],
  ['attn2.to_v_img', 'attn2.add_v_proj'],
  ['attn2.norm_k_img', 'attn2.norm_added_k'],
] as const);

/**
 * How the wan21 DiT reads checkpoints: its own names (original Wan2.1, `WanModel.state_dict()`),
 * diffusers' `WanTransformer3DModel` names, and the prefixes trainers and UIs put in front —
 * PEFT's `base_model.model.`, diffusers pipelines' `transformer.`, ComfyUI's `diffusion_model.`,
 * and `model.`.
 */
export const WAN21_DIT_CHECKPOINT_KEYS: CheckpointKeys = Object.freeze({
  prefixes: Object.freeze(['base_model.model.', 'transformer.', 'diffusion_model.', 'model.']),
  vocabularies: Object.freeze([renameVocabulary('diffusers', DIFFUSERS_RENAMES)]),
});
