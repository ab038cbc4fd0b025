import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  bfloat16ToFloat32,
  float32ToBfloat16,
  openSafetensorsCheckpoint,
} from '@flowfleet/formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCheckpoint } from '../../checkpoint/load-checkpoint.js';
import { initWeights } from '../init-weights.js';
import { WAN21_MINI } from '../wan21-config.js';
import { wan21MiniCard } from '../wan21-mini-card.js';
import { writeWan21DitCheckpoint } from './write-dit-checkpoint.js';

const ditSpec = wan21MiniCard.components.find((c) => c.id === 'dit')!;

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'wan21-ckpt-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const loadDit = (path: string) => loadCheckpoint(ditSpec, path);

function sameBits(a: ArrayBufferView, b: ArrayBufferView): boolean {
  const bytes = (v: ArrayBufferView) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  return bytes(a).equals(bytes(b));
}

describe('writeWan21DitCheckpoint', () => {
  it('writes both published layouts, which the card binds to identical weights', async () => {
    const diffusers = await writeWan21DitCheckpoint({
      config: WAN21_MINI,
      layout: 'diffusers',
      dir: join(root, 'diffusers'),
      seed: 3,
      maxShardBytes: 256 * 1024,
    });
    const wan = await writeWan21DitCheckpoint({
      config: WAN21_MINI,
      layout: 'wan',
      dir: join(root, 'wan'),
      seed: 3,
    });
    expect(diffusers.path).toBe(join(root, 'diffusers', 'transformer'));
    expect(diffusers.files.length).toBeGreaterThan(1);
    expect(diffusers.files[0]).toMatch(/diffusion_pytorch_model-00001-of-0000\d\.safetensors$/);
    expect(wan.files).toEqual([join(root, 'wan', 'diffusion_pytorch_model.safetensors')]);
    expect([diffusers.dtype, wan.dtype]).toEqual(['BF16', 'F32']);

    const fromDiffusers = await loadDit(diffusers.path);
    const fromWan = await loadDit(wan.path);
    // The init draws, rounded to bf16: the same weights whatever the layout and dtype.
    const expected = initWeights(WAN21_MINI, 3, 'dit');
    expect([...fromDiffusers.keys()]).toEqual([...expected.keys()]);
    for (const [name, tensor] of expected) {
      const grid = bfloat16ToFloat32(float32ToBfloat16(tensor.data as Float32Array));
      expect(sameBits(fromDiffusers.get(name)!.data, grid), name).toBe(true);
      expect(sameBits(fromWan.get(name)!.data, grid), name).toBe(true);
    }
  });

  it("names the diffusers tensors as WanTransformer3DModel does, Wan's as WanModel does", async () => {
    const diffusers = await openSafetensorsCheckpoint(
      (
        await writeWan21DitCheckpoint({
          config: WAN21_MINI,
          layout: 'diffusers',
          dir: join(root, 'd2'),
        })
      ).path,
    );
    const keys = new Set(diffusers.shards.flatMap((s) => [...s.header.tensors.keys()]));
    for (const key of [
      'patch_embedding.weight',
      'condition_embedder.time_embedder.linear_1.weight',
      'condition_embedder.text_embedder.linear_2.bias',
      'condition_embedder.time_proj.weight',
      'blocks.1.attn1.to_q.weight',
      'blocks.1.attn1.norm_k.weight',
      'blocks.1.attn2.to_out.0.bias',
      'blocks.1.norm2.weight',
      'blocks.1.ffn.net.0.proj.weight',
      'blocks.1.ffn.net.2.bias',
      'blocks.1.scale_shift_table',
      'proj_out.weight',
      'scale_shift_table',
    ]) {
      expect(keys.has(key), key).toBe(true);
    }
    expect([...keys].some((k) => /self_attn|cross_attn|norm3|modulation|head\./.test(k))).toBe(
      false,
    );
    const index = JSON.parse(await readFile(diffusers.indexPath!, 'utf8')) as {
      metadata: { total_size: number };
    };
    const wan = await openSafetensorsCheckpoint(
      (await writeWan21DitCheckpoint({ config: WAN21_MINI, layout: 'wan', dir: join(root, 'w2') }))
        .path,
    );
    const wanKeys = [...wan.shards[0]!.header.tensors.keys()];
    expect(wanKeys).toContain('blocks.1.self_attn.q.weight');
    expect(wanKeys).toContain('blocks.1.norm3.weight');
    expect(wanKeys).toContain('head.modulation');
    expect(index.metadata.total_size * 2).toBe(
      wan.shards[0]!.header.tensors.size > 0
        ? [...wan.shards[0]!.header.tensors.values()].reduce(
            (sum, e) => sum + (e.dataOffsets[1] - e.dataOffsets[0]),
            0,
          )
        : -1,
    );
  });
});
