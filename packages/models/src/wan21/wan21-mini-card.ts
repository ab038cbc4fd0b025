import { WAN21_MINI } from './wan21-config.js';
import { createWan21Card } from './wan21-card.js';
import { WAN21_VAE_MINI } from './vae/vae-config.js';

/** The wan21-mini card: the tiny Wan2.1-structured model the CPU reference runs quickly. */
export const wan21MiniCard = createWan21Card({ id: 'wan21-mini', config: WAN21_MINI });

/**
 * `wan21-mini-vae`: wan21-mini plus the small Wan2.1-structured VAE decoder `WAN21_VAE_MINI`
 * (component `vae`), so its rollouts can return decoded frames — the reduced config of the
 * pixel path that CI runs. The decoder has no TS reference forward, so the card needs an ort-*
 * backend; a worker loads it only when its models name it.
 */
export const wan21MiniVaeCard = createWan21Card({
  id: 'wan21-mini-vae',
  config: WAN21_MINI,
  vae: WAN21_VAE_MINI,
  loadByDefault: false,
});

/**
 * `wan21-mini-embeds`: the wan2.1-t2v-1.3b card's structure at the mini size — the wan21-mini DiT
 * whose text input is embeddings by reference (`promptEmbeds` / `negativePromptEmbeds`: umT5
 * embeddings [L ≤ 16, 64], zero-padded to 16 rows), no text encoder component, and the small VAE
 * decoder `WAN21_VAE_MINI` (so its rollouts can return decoded frames). The reduced config of the
 * embeddings-input training path that CI runs (examples/flowgrpo with `--text-encoder`); a worker
 * loads it only when its models name it, on an ort-* backend (the decoder has no TS reference).
 */
export const wan21MiniEmbedsCard = createWan21Card({
  id: 'wan21-mini-embeds',
  config: WAN21_MINI,
  textInput: 'embeddings',
  vae: WAN21_VAE_MINI,
  loadByDefault: false,
});
