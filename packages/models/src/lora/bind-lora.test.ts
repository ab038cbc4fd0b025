import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import type { CheckpointEntry } from '../checkpoint/bind-checkpoint.js';
import { wan21MiniCard } from '../wan21/wan21-mini-card.js';
import { bindLoraAdapter } from './bind-lora.js';
import type { PeftLoraConfig } from './lora-config.js';

const dit = wan21MiniCard.components.find((c) => c.id === 'dit')!;
const D = 128;
const R = 4;
const CONFIG: PeftLoraConfig = {
  r: R,
  lora_alpha: 8,
  target_modules: ['to_q', 'to_k', 'to_v', 'to_out.0'],
  use_rslora: false,
};
const ORIGINAL: PeftLoraConfig = { ...CONFIG, target_modules: ['q', 'k', 'v', 'o'] };
const ATTN = { self_attn: 'attn1', cross_attn: 'attn2' } as const;
const PROJ = { q: 'to_q', k: 'to_k', v: 'to_v', o: 'to_out.0' } as const;

/** Every q/k/v/o of both attentions of both blocks (16 layers), keyed by `keyOf`. */
function adapter(
  keyOf: (
    block: number,
    attn: keyof typeof ATTN,
    proj: keyof typeof PROJ,
    part: 'A' | 'B' | 'alpha',
  ) => string | undefined,
  rank = R,
): Map<string, CheckpointEntry> {
  const entries = new Map<string, CheckpointEntry>();
  for (const block of [0, 1]) {
    for (const attn of ['self_attn', 'cross_attn'] as const) {
      for (const proj of ['q', 'k', 'v', 'o'] as const) {
        entries.set(keyOf(block, attn, proj, 'A')!, { dtype: 'BF16', shape: [rank, D] });
        entries.set(keyOf(block, attn, proj, 'B')!, { dtype: 'BF16', shape: [D, rank] });
        const alpha = keyOf(block, attn, proj, 'alpha');
        if (alpha !== undefined) entries.set(alpha, { dtype: 'F32', shape: [] });
      }
    }
  }
  return entries;
}

const peft = adapter((b, attn, proj, part) =>
  part === 'alpha'
    ? undefined
    : `base_model.model.blocks.${b}.${ATTN[attn]}.${PROJ[proj]}.lora_${part}.weight`,
);

function failure(run: () => unknown): { code: string; details: Record<string, unknown> } {
  try {
    run();
  } catch (error) {
    if (isFlowfleetError(error)) return { code: error.code, details: { ...error.details } };
    throw error;
  }
  throw new Error('expected a coded error');
}

describe('bindLoraAdapter', () => {
  it('binds PEFT keys in the diffusers vocabulary to the card layers, in card order', () => {
    const binding = bindLoraAdapter(dit, peft, CONFIG, 16);
    expect(binding.boundLayers).toBe(16);
    expect(binding.layers[0]).toEqual({
      target: 'blocks.0.self_attn.q.weight',
      module: 'blocks.0.attn1.to_q',
      down: 'base_model.model.blocks.0.attn1.to_q.lora_A.weight',
      up: 'base_model.model.blocks.0.attn1.to_q.lora_B.weight',
      rank: R,
      alpha: 8,
      outFeatures: D,
      inFeatures: D,
    });
    expect(binding.layers.map((l) => l.target).slice(0, 5)).toEqual([
      'blocks.0.self_attn.q.weight',
      'blocks.0.self_attn.k.weight',
      'blocks.0.self_attn.v.weight',
      'blocks.0.self_attn.o.weight',
      'blocks.0.cross_attn.q.weight',
    ]);
  });

  it('binds diffusers (transformer.) and ComfyUI (diffusion_model., lora_down/up, .alpha) keys', () => {
    const diffusers = adapter((b, attn, proj, part) =>
      part === 'alpha'
        ? undefined
        : `transformer.blocks.${b}.${ATTN[attn]}.${PROJ[proj]}.lora_${part}.weight`,
    );
    expect(bindLoraAdapter(dit, diffusers, CONFIG).boundLayers).toBe(16);
    const comfy = adapter((b, attn, proj, part) => {
      const module = `diffusion_model.blocks.${b}.${attn}.${proj}`;
      return part === 'alpha'
        ? `${module}.alpha`
        : `${module}.lora_${part === 'A' ? 'down' : 'up'}.weight`;
    });
    const binding = bindLoraAdapter(dit, comfy, ORIGINAL, 16);
    expect(binding.boundLayers).toBe(16);
    expect(binding.layers[3]).toMatchObject({
      target: 'blocks.0.self_attn.o.weight',
      module: 'blocks.0.self_attn.o',
      alphaKey: 'diffusion_model.blocks.0.self_attn.o.alpha',
    });
  });

  it('refuses an adapter that binds no layer, or fewer than expectLayers (the silent no-op)', () => {
    const foreign = adapter((b, attn, proj, part) =>
      part === 'alpha' ? undefined : `unet.down_blocks.${b}.${attn}.${proj}.lora_${part}.weight`,
    );
    const none = failure(() => bindLoraAdapter(dit, foreign, ORIGINAL));
    expect(none.code).toBe('MODEL_LORA_UNBOUND');
    expect(none.details['boundLayers']).toBe(0);
    expect(none.details['unbound']).toHaveLength(16);
    const some = new Map([...peft].filter(([key]) => key.includes('.attn1.')));
    expect(bindLoraAdapter(dit, some, CONFIG).boundLayers).toBe(8);
    const few = failure(() => bindLoraAdapter(dit, some, CONFIG, 16));
    expect(few).toMatchObject({
      code: 'MODEL_LORA_UNBOUND',
      details: { boundLayers: 8, expectLayers: 16, unbound: [] },
    });
  });

  it('lists every shape, rank, pairing, target and config problem in one MODEL_LORA_INVALID', () => {
    const entries = new Map(peft);
    entries.set('base_model.model.blocks.0.attn1.to_q.lora_A.weight', {
      dtype: 'BF16',
      shape: [8, D],
    });
    entries.delete('base_model.model.blocks.0.attn1.to_k.lora_B.weight');
    entries.set('base_model.model.blocks.0.ffn.0.lora_A.weight', { dtype: 'BF16', shape: [R, D] });
    entries.set('base_model.model.blocks.0.ffn.0.lora_B.weight', {
      dtype: 'BF16',
      shape: [512, R],
    });
    entries.set('base_model.model.blocks.1.attn1.to_q.lora_magnitude_vector', {
      dtype: 'F32',
      shape: [D],
    });
    const { code, details } = failure(() =>
      bindLoraAdapter(dit, entries, { ...CONFIG, use_dora: true }),
    );
    expect(code).toBe('MODEL_LORA_INVALID');
    expect(details['problems']).toEqual([
      'use_dora: DoRA adapters are not merged',
      'base_model.model.blocks.1.attn1.to_q.lora_magnitude_vector: not a LoRA tensor (lora_A/lora_B/lora_down/lora_up .weight, .alpha)',
      'base_model.model.blocks.0.attn1.to_q: A is BF16 [8, 128] and B BF16 [128, 4]; blocks.0.self_attn.q.weight [128, 128] at rank 4 needs A [4, 128] and B [128, 4] (F32, F16 or BF16)',
      'base_model.model.blocks.0.attn1.to_k: needs both A (lora_A/lora_down) and B (lora_B/lora_up)',
      'base_model.model.blocks.0.ffn.0: blocks.0.ffn.0 is not in target_modules',
    ]);
  });

  it('takes per-module rank and alpha from rank_pattern and alpha_pattern', () => {
    const entries = new Map(peft);
    entries.set('base_model.model.blocks.1.attn2.to_v.lora_A.weight', {
      dtype: 'BF16',
      shape: [2, D],
    });
    entries.set('base_model.model.blocks.1.attn2.to_v.lora_B.weight', {
      dtype: 'BF16',
      shape: [D, 2],
    });
    const binding = bindLoraAdapter(dit, entries, {
      ...CONFIG,
      rank_pattern: { 'blocks.1.attn2.to_v': 2 },
      alpha_pattern: { 'attn2.to_v': 3 },
    });
    const layer = binding.layers.find((l) => l.target === 'blocks.1.cross_attn.v.weight');
    expect(layer).toMatchObject({ rank: 2, alpha: 3 });
    expect(binding.layers.find((l) => l.target === 'blocks.0.cross_attn.v.weight')).toMatchObject({
      rank: 4,
      alpha: 3,
    });
    expect(binding.layers.find((l) => l.target === 'blocks.0.cross_attn.k.weight')).toMatchObject({
      rank: 4,
      alpha: 8,
    });
  });
});
