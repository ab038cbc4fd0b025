import { describe, expect, it } from 'vitest';
import { isFlowfleetError } from '@flowfleet/errors';
import {
  validateWanVaeConfig,
  vaeFrameCount,
  WAN21_VAE,
  WAN21_VAE_MINI,
  type WanVaeConfig,
} from './vae-config.js';
import { vaeCacheSlots, vaeDecoderParameters, vaeParameterShapes } from './vae-plan.js';
import { initVaeDecoderWeights } from './vae-weights.js';

const count = (config: WanVaeConfig) =>
  [...vaeParameterShapes(config).values()].reduce(
    (n, dims) => n + dims.reduce((a, b) => a * b, 1),
    0,
  );

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return isFlowfleetError(error)
      ? `${error.code}:${String(error.details?.['field'])}`
      : 'not-flowfleet';
  }
  return undefined;
}

describe('the Wan2.1 VAE decoder plan', () => {
  it('the published decoder: 73,295,603 parameters in 108 tensors (147 MB in bf16)', () => {
    const params = vaeDecoderParameters(WAN21_VAE);
    expect(params).toHaveLength(108);
    expect(count(WAN21_VAE)).toBe(73_295_603);
    expect(new Set(params.map((p) => p.diffusers)).size).toBe(108);
    expect(count(WAN21_VAE_MINI)).toBe(339_063);
  });

  it('names and dims in both published vocabularies', () => {
    const byName = new Map(vaeDecoderParameters(WAN21_VAE).map((p) => [p.name, p]));
    const pinned: [string, string, number[]][] = [
      ['conv2.weight', 'post_quant_conv.weight', [16, 16, 1, 1, 1]],
      ['decoder.conv1.weight', 'decoder.conv_in.weight', [384, 16, 3, 3, 3]],
      ['decoder.middle.1.norm.gamma', 'decoder.mid_block.attentions.0.norm.gamma', [384, 1, 1]],
      [
        'decoder.middle.1.to_qkv.weight',
        'decoder.mid_block.attentions.0.to_qkv.weight',
        [1152, 384, 1, 1],
      ],
      [
        'decoder.middle.2.residual.3.gamma',
        'decoder.mid_block.resnets.1.norm2.gamma',
        [384, 1, 1, 1],
      ],
      [
        'decoder.upsamples.3.time_conv.weight',
        'decoder.up_blocks.0.upsamplers.0.time_conv.weight',
        [768, 384, 3, 1, 1],
      ],
      [
        'decoder.upsamples.4.shortcut.weight',
        'decoder.up_blocks.1.resnets.0.conv_shortcut.weight',
        [384, 192, 1, 1, 1],
      ],
      [
        'decoder.upsamples.7.resample.1.bias',
        'decoder.up_blocks.1.upsamplers.0.resample.1.bias',
        [192],
      ],
      [
        'decoder.upsamples.11.resample.1.weight',
        'decoder.up_blocks.2.upsamplers.0.resample.1.weight',
        [96, 192, 3, 3],
      ],
      [
        'decoder.upsamples.14.residual.6.weight',
        'decoder.up_blocks.3.resnets.2.conv2.weight',
        [96, 96, 3, 3, 3],
      ],
      ['decoder.head.0.gamma', 'decoder.norm_out.gamma', [96, 1, 1, 1]],
      ['decoder.head.2.weight', 'decoder.conv_out.weight', [3, 96, 3, 3, 3]],
    ];
    for (const [name, diffusers, dims] of pinned) {
      expect({ name, ...byName.get(name) }).toEqual({ name, diffusers, dims });
    }
    expect(byName.has('decoder.upsamples.11.time_conv.weight')).toBe(false); // the third upsampling is 2D
  });

  it('32 cache slots for the published decoder, at the widths and scales of their convs', () => {
    const slots = vaeCacheSlots(WAN21_VAE);
    expect(slots).toHaveLength(32);
    expect(slots[0]).toEqual({ name: 'decoder.conv1', channels: 16, scale: 1 });
    const byName = new Map(slots.map((s) => [s.name, s]));
    expect(byName.get('decoder.upsamples.3.time_conv')).toEqual({
      name: 'decoder.upsamples.3.time_conv',
      channels: 384,
      scale: 1,
    });
    expect(byName.get('decoder.upsamples.4.residual.2')).toEqual({
      name: 'decoder.upsamples.4.residual.2',
      channels: 192,
      scale: 2,
    });
    expect(byName.get('decoder.upsamples.7.time_conv')?.scale).toBe(2);
    expect(byName.get('decoder.upsamples.12.residual.2')).toEqual({
      name: 'decoder.upsamples.12.residual.2',
      channels: 96,
      scale: 8,
    });
    expect(slots[31]).toEqual({ name: 'decoder.head.2', channels: 96, scale: 8 });
    // Every slot is a causal conv of the parameter list (a kernel of 3 frames).
    const shapes = vaeParameterShapes(WAN21_VAE);
    for (const slot of slots) expect(shapes.get(`${slot.name}.weight`)?.[2]).toBe(3);
  });

  it('T latent frames decode to 1 + 4(T − 1) frames', () => {
    expect([1, 2, 9].map((t) => vaeFrameCount(WAN21_VAE, t))).toEqual([1, 5, 33]);
    const oneTemporal = { ...WAN21_VAE_MINI, temporalUpsample: [false, true, false] };
    expect(vaeFrameCount(oneTemporal, 3)).toBe(5);
  });

  it('refuses configs that break the structure, naming the field', () => {
    const bad: [Partial<WanVaeConfig>, string][] = [
      [{ zDim: 0 }, 'zDim'],
      [{ dimMult: [1] }, 'dimMult'],
      [{ temporalUpsample: [true, true] }, 'temporalUpsample'],
      [{ baseDim: 3 }, 'baseDim'],
      [{ latentsMean: [0, 0, 0] }, 'latentsMean'],
      [{ latentsStd: [1, 1, 0, 1] }, 'latentsStd'],
    ];
    for (const [override, field] of bad) {
      expect(codeOf(() => validateWanVaeConfig({ ...WAN21_VAE_MINI, ...override }))).toBe(
        `MODEL_CONFIG_INVALID:${field}`,
      );
    }
    expect(codeOf(() => validateWanVaeConfig(WAN21_VAE))).toBeUndefined();
  });

  it('init weights are deterministic per seed, of the plan dims, gammas near 1', () => {
    const a = initVaeDecoderWeights(WAN21_VAE_MINI, 3);
    const b = initVaeDecoderWeights(WAN21_VAE_MINI, 3);
    const c = initVaeDecoderWeights(WAN21_VAE_MINI, 4);
    expect([...a.keys()]).toEqual([...vaeParameterShapes(WAN21_VAE_MINI).keys()]);
    for (const [name, t] of a) {
      expect(t.dims).toEqual(vaeParameterShapes(WAN21_VAE_MINI).get(name));
      const bytes = (data: unknown) => Buffer.from((data as Float32Array).buffer);
      expect(bytes(t.data).equals(bytes(b.get(name)?.data))).toBe(true);
      expect(bytes(t.data).equals(bytes(c.get(name)?.data))).toBe(false);
    }
    const gamma = a.get('decoder.head.0.gamma')?.data as Float32Array;
    expect(Math.max(...gamma.map((v) => Math.abs(v - 1)))).toBeLessThan(0.2);
  });
});
