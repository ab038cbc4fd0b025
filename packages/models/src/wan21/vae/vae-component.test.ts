import { describe, expect, it } from 'vitest';
import { isFlowfleetError } from '@flowfleet/errors';
import { createPlatform, type ComponentForward } from '@flowfleet/platform';
import { createComponentRegistry, createKernelRegistry } from '@flowfleet/registry';
import { createCardRegistry } from '../../cards/card-registry.js';
import { bindCheckpoint, type CheckpointEntry } from '../../checkpoint/bind-checkpoint.js';
import { createWan21Card } from '../wan21-card.js';
import { WAN21_1_3B, WAN21_MINI } from '../wan21-config.js';
import { WAN21_VAE, WAN21_VAE_MINI } from './vae-config.js';
import { createVaeDecoderComponent, VAE_DECODER_KIND } from './vae-component.js';
import { vaeDecoderParameters } from './vae-plan.js';

async function codeOf(run: () => unknown): Promise<string | undefined> {
  try {
    await run();
  } catch (error) {
    return isFlowfleetError(error) ? error.code : `not-flowfleet: ${String(error)}`;
  }
  return undefined;
}

const entry = (dims: readonly number[], dtype = 'BF16'): CheckpointEntry => ({
  dtype,
  shape: [...dims],
});

describe('the vae_decoder component', () => {
  it('a wan21 card with a VAE carries it as component `vae` of kind vae_decoder', () => {
    const card = createWan21Card({ id: 'wan21-mini-vae', config: WAN21_MINI, vae: WAN21_VAE_MINI });
    expect(card.components.map((c) => [c.id, c.kind])).toEqual([
      ['dit', 'dit'],
      ['text_encoder', 'text_encoder'],
      ['vae', VAE_DECODER_KIND],
    ]);
    expect(createCardRegistry([card]).componentKinds()).toContain(VAE_DECODER_KIND);
    const vae = card.components[2]!;
    expect(vae.latentSized).toBe(true);
    const dims = vae.forwardInputDims(2, { frames: 3, height: 4, width: 6 });
    expect(dims['latent']).toEqual([2, 4, 1, 4, 6]);
    expect(dims['frame_index']).toEqual([1]);
    expect(dims['cache.decoder.head.2']).toEqual([2, 8, 2, 32, 48]);
    expect(vae.onnx?.buildOnnx({ form: 'eager' }).byteLength).toBeGreaterThan(0);
  });

  it('refuses a VAE whose latent channels are not the DiT’s', async () => {
    expect(
      await codeOf(() => createWan21Card({ id: 'x', config: WAN21_MINI, vae: WAN21_VAE })),
    ).toBe('MODEL_CONFIG_INVALID');
    expect(
      await codeOf(() => createWan21Card({ id: 'y', config: WAN21_1_3B, vae: WAN21_VAE })),
    ).toBeUndefined();
  });

  it('has no TS reference: with no ort-* cell the last rung refuses with a coded error', async () => {
    const platform = createPlatform({
      facts: { device: 'cpu', arch: 'generic', features: [], cpuArch: 'generic' },
      kernels: createKernelRegistry(),
      components: createComponentRegistry(),
    });
    const spec = createVaeDecoderComponent(WAN21_VAE_MINI);
    expect(await codeOf(() => platform.buildComponent<unknown, ComponentForward>(spec, spec))).toBe(
      'MODEL_NO_REFERENCE_FORWARD',
    );
  });

  it('binds the published layouts (Wan’s names, diffusers’ names), skipping the encoder', () => {
    const spec = createVaeDecoderComponent(WAN21_VAE);
    const params = vaeDecoderParameters(WAN21_VAE);
    const encoder: [string, CheckpointEntry][] = [
      ['encoder.conv1.weight', entry([96, 3, 3, 3, 3])],
      ['conv1.weight', entry([32, 32, 1, 1, 1])],
      ['quant_conv.weight', entry([32, 32, 1, 1, 1])],
      ['encoder.down_blocks.0.conv1.weight', entry([96, 96, 3, 3, 3])],
    ];
    for (const layout of ['name', 'diffusers'] as const) {
      const entries = new Map([
        ...params.map((p): [string, CheckpointEntry] => [p[layout], entry(p.dims)]),
        ...encoder,
      ]);
      const bound = bindCheckpoint(spec, entries);
      expect(bound.size).toBe(108);
      expect(bound.get('decoder.upsamples.3.time_conv.weight')).toBe(
        layout === 'name'
          ? 'decoder.upsamples.3.time_conv.weight'
          : 'decoder.up_blocks.0.upsamplers.0.time_conv.weight',
      );
    }
  });

  it('refuses a checkpoint with a missing, an unknown, a doubled or a misshapen tensor, listing each', async () => {
    const spec = createVaeDecoderComponent(WAN21_VAE_MINI);
    const params = vaeDecoderParameters(WAN21_VAE_MINI);
    const entries = new Map(params.map((p): [string, CheckpointEntry] => [p.name, entry(p.dims)]));
    entries.delete('decoder.head.0.gamma');
    entries.set('decoder.upsamples.99.time_conv.weight', entry([1]));
    entries.set('post_quant_conv.weight', entry([4, 4, 1, 1, 1])); // conv2.weight a second time
    entries.set('decoder.conv1.weight', entry([1, 2, 3]));
    try {
      bindCheckpoint(spec, entries);
      expect.unreachable();
    } catch (error) {
      expect(isFlowfleetError(error) && error.code).toBe('MODEL_WEIGHTS_MISMATCH');
      const details = isFlowfleetError(error) ? error.details : {};
      expect(details['missing']).toEqual(['decoder.head.0.gamma']);
      expect(details['unexpected']).toEqual([
        'decoder.upsamples.99.time_conv.weight',
        'post_quant_conv.weight',
      ]);
      expect(details['wrongShape']).toEqual([
        expect.objectContaining({
          name: 'decoder.conv1.weight',
          expected: [32, 4, 3, 3, 3],
          actual: [1, 2, 3],
        }),
      ]);
    }
  });
});
