import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { createWan21Card } from '../wan21/wan21-card.js';
import { wan21MiniCard } from '../wan21/wan21-mini-card.js';
import { WAN21_1_3B } from '../wan21/wan21-config.js';
import { bindCheckpoint, checkpointKeyLookup, type CheckpointEntry } from './bind-checkpoint.js';

const dit = wan21MiniCard.components.find((c) => c.id === 'dit')!;
const diffusers = dit.checkpointKeys!.vocabularies.find((v) => v.name === 'diffusers')!;

function entriesOf(keyOf: (name: string) => string, dtype = 'BF16'): Map<string, CheckpointEntry> {
  return new Map(
    [...dit.parameterShapes()].map(([name, shape]) => [keyOf(name), { dtype, shape }]),
  );
}

function mismatch(entries: ReadonlyMap<string, CheckpointEntry>): Record<string, unknown> {
  try {
    bindCheckpoint(dit, entries);
  } catch (error) {
    if (isFlowfleetError(error, 'MODEL_WEIGHTS_MISMATCH')) return { ...error.details };
    throw error;
  }
  throw new Error('expected MODEL_WEIGHTS_MISMATCH');
}

describe('the wan21 DiT checkpoint key maps', () => {
  it("name every tensor as diffusers' convert_wan_to_diffusers.py does (norm2/norm3 swapped)", () => {
    const names = (keys: string[]) => keys.map((name) => diffusers.keyOf(name));
    expect(
      names([
        'patch_embedding.weight',
        'text_embedding.0.weight',
        'text_embedding.2.bias',
        'time_embedding.0.weight',
        'time_embedding.2.bias',
        'time_projection.1.weight',
        'head.head.weight',
        'head.modulation',
        'blocks.1.modulation',
        'blocks.1.self_attn.q.weight',
        'blocks.1.self_attn.o.bias',
        'blocks.1.self_attn.norm_q.weight',
        'blocks.1.cross_attn.k.weight',
        'blocks.1.cross_attn.o.weight',
        'blocks.1.cross_attn.norm_k.weight',
        'blocks.1.norm3.weight',
        'blocks.1.ffn.0.weight',
        'blocks.1.ffn.2.bias',
      ]),
    ).toEqual([
      'patch_embedding.weight',
      'condition_embedder.text_embedder.linear_1.weight',
      'condition_embedder.text_embedder.linear_2.bias',
      'condition_embedder.time_embedder.linear_1.weight',
      'condition_embedder.time_embedder.linear_2.bias',
      'condition_embedder.time_proj.weight',
      'proj_out.weight',
      'scale_shift_table',
      'blocks.1.scale_shift_table',
      'blocks.1.attn1.to_q.weight',
      'blocks.1.attn1.to_out.0.bias',
      'blocks.1.attn1.norm_q.weight',
      'blocks.1.attn2.to_k.weight',
      'blocks.1.attn2.to_out.0.weight',
      'blocks.1.attn2.norm_k.weight',
      'blocks.1.norm2.weight',
      'blocks.1.ffn.net.0.proj.weight',
      'blocks.1.ffn.net.2.bias',
    ]);
  });

  it('are one-to-one for the 1.3B DiT (825 tensors, no two names share a key)', () => {
    const card = createWan21Card({ id: 'wan21-1.3b', config: WAN21_1_3B });
    const spec = card.components.find((c) => c.id === 'dit')!;
    const names = [...spec.parameterShapes().keys()];
    expect(names).toHaveLength(825);
    expect(new Set(names.map((n) => diffusers.keyOf(n))).size).toBe(825);
    const lookup = checkpointKeyLookup(spec);
    for (const name of names) {
      expect(lookup.resolve(`transformer.${diffusers.keyOf(name)}`)?.name).toBe(name);
      expect(lookup.resolve(`diffusion_model.${name}`)?.name).toBe(name);
    }
  });

  it('bind the card names, diffusers names and prefixed names to the same parameters', () => {
    const order = [...dit.parameterShapes().keys()];
    for (const keyOf of [
      (n: string) => n,
      (n: string) => diffusers.keyOf(n),
      (n: string) => `transformer.${diffusers.keyOf(n)}`,
      (n: string) => `diffusion_model.${n}`,
      (n: string) => `model.${n}`,
    ]) {
      const bound = bindCheckpoint(dit, entriesOf(keyOf));
      expect([...bound.keys()]).toEqual(order);
      expect([...bound.values()]).toEqual(order.map(keyOf));
    }
  });

  it('refuse with one error listing every missing, unexpected, wrong-shape and wrong-dtype key', () => {
    const entries = entriesOf((n) => diffusers.keyOf(n), 'F32');
    entries.delete('proj_out.bias');
    entries.delete('blocks.0.norm2.weight');
    entries.set('blocks.0.norm2.weight.extra', { dtype: 'F32', shape: [1] });
    // A second key for a parameter already bound (the card's own name beside diffusers').
    entries.set('patch_embedding.weight', { dtype: 'F32', shape: [1] });
    entries.set('transformer.patch_embedding.weight', { dtype: 'F32', shape: [1] });
    entries.set('blocks.1.attn1.to_q.weight', { dtype: 'F32', shape: [128, 127] });
    entries.set('blocks.1.attn1.to_k.weight', { dtype: 'I32', shape: [128, 128] });
    const details = mismatch(entries);
    expect(details['missing']).toEqual(['blocks.0.norm3.weight', 'head.head.bias']);
    expect(details['unexpected']).toEqual([
      'blocks.0.norm2.weight.extra',
      'transformer.patch_embedding.weight',
    ]);
    expect(details['wrongShape']).toEqual([
      { name: 'patch_embedding.weight', expected: [128, 4, 1, 2, 2], actual: [1], dtype: 'F32' },
      {
        name: 'blocks.1.self_attn.q.weight',
        source: 'blocks.1.attn1.to_q.weight',
        expected: [128, 128],
        actual: [128, 127],
        dtype: 'F32',
      },
      {
        name: 'blocks.1.self_attn.k.weight',
        source: 'blocks.1.attn1.to_k.weight',
        expected: [128, 128],
        actual: [128, 128],
        dtype: 'I32',
      },
    ]);
  });

  it('are the card names only for a component without maps (the text encoder)', () => {
    const te = wan21MiniCard.components.find((c) => c.id === 'text_encoder')!;
    const lookup = checkpointKeyLookup(te);
    expect(lookup.resolve('text_encoder.mlp.0.weight')?.name).toBe('text_encoder.mlp.0.weight');
    expect(lookup.resolve('model.text_encoder.mlp.0.weight')).toBeUndefined();
  });
});
