// The three payloads of bench:sync, on one no-op card sized to them: a ~258 MB float32 dit
// checkpoint (dim 192, ffn 768, 108 blocks: 2,931 tensors, the largest 0.88 MB), a delta of it
// that changes ~3 % of the bytes, and a rank-32 PEFT LoRA adapter on every q/k/v/o projection
// (864 layers, 42.5 MB in F32).
import { writeSafetensors, type SafetensorsTensor } from '@flowfleet/formats';
import { encodeWeights } from '@flowfleet/models';
import { createWan21Config, initWeights } from '@flowfleet/models/wan21';
import { noopCard } from './noop-card.js';

export const SYNC_CONFIG = createWan21Config({ dim: 192, ffnDim: 768, heads: 4, layers: 108 });
export const SYNC_CARD = noopCard({
  id: 'bench-sync-258m',
  config: SYNC_CONFIG,
  shareInitialWeights: true,
});
export const LORA_RANK = 32;
/** Share of the checkpoint's bytes the delta changes. */
export const DELTA_SHARE = 0.03;

/** The blobs and syncs of one bench round. */
export interface SyncPayloads {
  readonly full: Uint8Array;
  readonly delta: Uint8Array;
  /** Bytes of the tensors the delta changed (what a worker holding the full version fetches). */
  readonly deltaChangedBytes: number;
  readonly lora: Uint8Array;
  readonly loraConfig: Record<string, unknown>;
  readonly loraLayers: number;
}

/** Deterministic small values (a stand-in for trained adapter factors). */
function filled(length: number, seed: number): Float32Array {
  const out = new Float32Array(length);
  let state = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    out[i] = (state / 2 ** 32 - 0.5) * 0.02;
  }
  return out;
}

/** Builds the payloads (about 560 MB in memory while they are uploaded). */
export function buildSyncPayloads(): SyncPayloads {
  const base = initWeights(SYNC_CONFIG, 1_001, 'dit');
  const full = encodeWeights(base);
  const total = [...base.values()].reduce((sum, t) => sum + t.data.byteLength, 0);
  // Every k-th weight matrix changes until DELTA_SHARE of the bytes did (an optimiser step on a
  // few layers).
  const changed = new Map(base);
  let deltaChangedBytes = 0;
  const matrices = [...base].filter(([, t]) => t.dims.length === 2);
  const stride = Math.floor(0.9 / DELTA_SHARE);
  for (let i = 0; deltaChangedBytes < DELTA_SHARE * total; i = (i + stride) % matrices.length) {
    const [name, tensor] = matrices[i]!;
    const data = Float32Array.from(tensor.data as Float32Array, (v) => v * 0.5 + 0.001);
    changed.set(name, { dtype: 'float32', dims: tensor.dims, data });
    deltaChangedBytes += data.byteLength;
  }
  const delta = encodeWeights(changed);
  const adapter = new Map<string, SafetensorsTensor>();
  let loraLayers = 0;
  const dim = SYNC_CONFIG.dim;
  for (let block = 0; block < SYNC_CONFIG.layers; block++) {
    for (const attn of ['self_attn', 'cross_attn']) {
      for (const proj of ['q', 'k', 'v', 'o']) {
        const key = `base_model.model.blocks.${block}.${attn}.${proj}`;
        const seed = loraLayers * 2 + 7;
        adapter.set(`${key}.lora_A.weight`, {
          dtype: 'F32',
          shape: [LORA_RANK, dim],
          data: filled(LORA_RANK * dim, seed),
        });
        adapter.set(`${key}.lora_B.weight`, {
          dtype: 'F32',
          shape: [dim, LORA_RANK],
          data: filled(dim * LORA_RANK, seed + 1),
        });
        loraLayers += 1;
      }
    }
  }
  return {
    full,
    delta,
    deltaChangedBytes,
    lora: writeSafetensors(adapter),
    loraConfig: {
      r: LORA_RANK,
      lora_alpha: LORA_RANK,
      target_modules: ['q', 'k', 'v', 'o'],
      use_rslora: false,
    },
    loraLayers,
  };
}
