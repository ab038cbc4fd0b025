import { gaussianNoise } from '@flowfleet/numerics';
import { sharedTensor, type TensorData } from '@flowfleet/platform';
import type { CheckpointKeys } from '../../checkpoint/checkpoint-keys.js';
import type { WanVaeConfig } from './vae-config.js';
import { vaeDecoderParameters } from './vae-plan.js';

/** Philox stream offset of the VAE decoder's init, apart from the DiT's and the text encoder's. */
export const VAE_DECODER_STREAM_BASE = 0x20000;

/** Scale of biases and of the norm gammas' offsets from 1. */
const SMALL = 0.02;

/**
 * Deterministic decoder weights from a seed: tensor i of the name-sorted list is drawn from
 * Philox stream VAE_DECODER_STREAM_BASE + i; conv weights N(0, 1/fan_in), biases N(0, 0.02²),
 * RMS-norm gammas 1 + N(0, 0.02²). Returned in forward (parameter) order.
 */
export function initVaeDecoderWeights(config: WanVaeConfig, seed: number): Map<string, TensorData> {
  const params = vaeDecoderParameters(config);
  const sorted = params.map((p) => p.name).sort();
  const weights = new Map<string, TensorData>();
  for (const { name, dims } of params) {
    const n = dims.reduce((a, b) => a * b, 1);
    const data = gaussianNoise(seed, VAE_DECODER_STREAM_BASE + sorted.indexOf(name), n);
    const fanIn = dims.slice(1).reduce((a, b) => a * b, 1);
    const [scale, offset] = name.endsWith('.gamma')
      ? [SMALL, 1]
      : name.endsWith('.bias')
        ? [SMALL, 0]
        : [1 / Math.sqrt(fanIn), 0];
    for (let i = 0; i < n; i++) data[i] = offset + scale * data[i]!;
    // Shared one tensor at a time (`sharedTensor`): a weight version is held once per process.
    weights.set(name, sharedTensor({ dtype: 'float32', dims: [...dims], data }));
  }
  return weights;
}

/**
 * The decoder's checkpoint keys: its own names are Wan's (`Wan2.1_VAE.pth`); the `diffusers`
 * vocabulary is `AutoencoderKLWan`'s (`vae/diffusion_pytorch_model.safetensors`), one name per
 * tensor from the same walk of the structure; the encoder's tensors are skipped.
 */
export function vaeCheckpointKeys(config: WanVaeConfig): CheckpointKeys {
  const diffusers = new Map(vaeDecoderParameters(config).map((p) => [p.name, p.diffusers]));
  return {
    prefixes: [],
    vocabularies: [
      { name: 'diffusers', keyOf: (cardName: string) => diffusers.get(cardName) ?? cardName },
    ],
    // Both published files hold the whole autoencoder: the encoder and its 1×1×1 conv
    // (Wan's `conv1`, diffusers' `quant_conv`) are not the decoder's.
    ignoredPrefixes: ['encoder.', 'conv1.', 'quant_conv.'],
  };
}
