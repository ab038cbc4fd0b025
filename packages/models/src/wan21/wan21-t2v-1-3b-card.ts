import { createWan21Card } from './wan21-card.js';
import { WAN21_1_3B } from './wan21-config.js';

/**
 * The rest of flow_grpo's Wan2.1 recipe, which a card's sampling defaults cannot say: what a
 * trainer sets up around the rollouts it asks for.
 */
export const WAN21_T2V_1_3B_RECIPE = Object.freeze({
  /**
   * flow_grpo `scripts/train_wan2_1.py`: `LoraConfig(r=32, lora_alpha=64,
   * init_lora_weights="gaussian", target_modules=[...])` on the diffusers transformer.
   */
  lora: Object.freeze({
    r: 32,
    loraAlpha: 64,
    targetModules: Object.freeze([
      'add_k_proj',
      'add_q_proj',
      'add_v_proj',
      'to_add_out',
      'to_k',
      'to_out.0',
      'to_q',
      'to_v',
    ]),
  }),
  /** flow_grpo `config/grpo.py` `general_ocr_wan2_1`: `sample.num_image_per_prompt = 4`. */
  groupSize: 4,
  /** flow_grpo `config/grpo.py` `general_ocr_wan2_1`: `height 240, width 416, frames 33`. */
  video: Object.freeze({ height: 240, width: 416, frames: 33 }),
  /**
   * flow_grpo `scripts/train_wan2_1.py`: the unconditional branch is the embedding of `[""]`
   * (`compute_text_embeddings([""], ...)`): upload it once as `negativePromptEmbeds`.
   */
  negativePrompt: '',
});

/**
 * `wan2.1-t2v-1.3b`: the published Wan2.1-T2V-1.3B DiT (dim 1536, 30 layers, 12 heads, FFN 8960,
 * 16 latent channels, patch 1×2×2, text 512 × 4096: 1,418,996,800 parameters, `WAN21_1_3B`)
 * whose text input is umT5-XXL embeddings by reference — it has no text encoder component (the
 * 5.7 B-parameter encoder runs once per prompt in the trainer, as flow_grpo, DanceGRPO and
 * diffusers' `WanPipeline(prompt_embeds=...)` do). Sampling defaults, each from its source:
 * - steps 20, guidance 4.5: flow_grpo `config/grpo.py` `general_ocr_wan2_1` (`sample.num_steps =
 *   20`, `sample.guidance_scale = 4.5`);
 * - noise level 0.7: flow_grpo `config/base.py` (`sample.noise_level = 0.7`, not overridden);
 * - shift 3: the `flow_shift` of `Wan-AI/Wan2.1-T2V-1.3B-Diffusers`' scheduler_config.json, the
 *   scheduler flow_grpo's `WanPipeline.from_pretrained` loads;
 * - sampler `sde`: FlowGRPO's rollouts are SDE steps with log-probs;
 * - latent 9 × 30 × 52: the 240 × 416 × 33 video of `general_ocr_wan2_1` through the Wan VAE
 *   (temporal stride 4: (33 − 1) / 4 + 1 = 9; spatial stride 8: 240 / 8, 416 / 8).
 * A worker loads its 5.7 GB of float32 weights only when its models name it (`loadByDefault`
 * false). Its DiT runs in the eager ONNX form only (`graphCapture: 'eager'`): one session whose
 * weights are graph inputs, shared by every latent shape and every weight version; the captured
 * form would bake 5.7 GB of initializers into one protobuf (2 GB limit) per shape (ADR 015).
 */
export const wan21T2v13bCard = createWan21Card({
  id: 'wan2.1-t2v-1.3b',
  config: WAN21_1_3B,
  textInput: 'embeddings',
  loadByDefault: false,
  graphCapture: 'eager',
  sampling: Object.freeze({
    steps: 20,
    shift: 3,
    guidanceScale: 4.5,
    noiseLevel: 0.7,
    sampler: 'sde' as const,
  }),
  latent: Object.freeze({ frames: 9, height: 30, width: 52 }),
});
