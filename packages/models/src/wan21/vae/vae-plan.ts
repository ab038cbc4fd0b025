import { validateWanVaeConfig, vaeDecoderDims, type WanVaeConfig } from './vae-config.js';

/**
 * The Wan2.1 VAE decoder's structure, walked once: every layer with its Wan state_dict prefix
 * (the card's names), its diffusers (`AutoencoderKLWan`) prefix, its widths and its resolution
 * level (spatial scale 2^level of the latent). Parameters, cache slots and the ONNX graph all
 * come from this plan, so they cannot disagree.
 */
export type VaeLayer =
  | {
      readonly kind: 'residual';
      readonly wan: string;
      readonly diffusers: string;
      readonly cin: number;
      readonly cout: number;
      readonly level: number;
    }
  | {
      readonly kind: 'attention';
      readonly wan: string;
      readonly diffusers: string;
      readonly dim: number;
      readonly level: number;
    }
  | {
      readonly kind: 'resample';
      readonly wan: string;
      readonly diffusers: string;
      readonly dim: number;
      readonly temporal: boolean;
      /** The level of its input; its output is one level up. */
      readonly level: number;
    };

/** One decoder tensor: Wan's name (the card's), diffusers' name, dims. */
export interface VaeParameter {
  readonly name: string;
  readonly diffusers: string;
  readonly dims: readonly number[];
}

/**
 * One causal conv's (or temporal upsampling's) cache between latent frames: the last 2 frames of
 * its input, [B, channels, 2, h·scale, w·scale]; named after the conv's weight prefix.
 */
export interface VaeCacheSlot {
  readonly name: string;
  readonly channels: number;
  /** Spatial scale relative to the latent. */
  readonly scale: number;
}

/** The decoder's layers after `conv2` and `decoder.conv1`, in forward order. */
export function vaeDecoderLayers(config: WanVaeConfig): VaeLayer[] {
  validateWanVaeConfig(config);
  const dims = vaeDecoderDims(config);
  const middle = dims[0] ?? 0;
  const layers: VaeLayer[] = [
    {
      kind: 'residual',
      wan: 'decoder.middle.0',
      diffusers: 'decoder.mid_block.resnets.0',
      cin: middle,
      cout: middle,
      level: 0,
    },
    {
      kind: 'attention',
      wan: 'decoder.middle.1',
      diffusers: 'decoder.mid_block.attentions.0',
      dim: middle,
      level: 0,
    },
    {
      kind: 'residual',
      wan: 'decoder.middle.2',
      diffusers: 'decoder.mid_block.resnets.1',
      cin: middle,
      cout: middle,
      level: 0,
    },
  ];
  let index = 0; // Wan numbers `decoder.upsamples` flat: residual blocks and resamples alike.
  for (let stage = 0; stage < dims.length - 1; stage++) {
    const cout = dims[stage + 1] ?? 0;
    let cin = stage > 0 ? (dims[stage] ?? 0) / 2 : (dims[stage] ?? 0);
    for (let block = 0; block <= config.numResBlocks; block++) {
      const diffusers = `decoder.up_blocks.${stage}.resnets.${block}`;
      layers.push({
        kind: 'residual',
        wan: `decoder.upsamples.${index}`,
        diffusers,
        cin,
        cout,
        level: stage,
      });
      cin = cout;
      index += 1;
    }
    if (stage < config.temporalUpsample.length) {
      layers.push({
        kind: 'resample',
        wan: `decoder.upsamples.${index}`,
        diffusers: `decoder.up_blocks.${stage}.upsamplers.0`,
        dim: cout,
        temporal: config.temporalUpsample[stage] === true,
        level: stage,
      });
      index += 1;
    }
  }
  return layers;
}

function conv(out: VaeParameter[], wan: string, diffusers: string, dims: number[]): void {
  out.push({ name: `${wan}.weight`, diffusers: `${diffusers}.weight`, dims });
  out.push({ name: `${wan}.bias`, diffusers: `${diffusers}.bias`, dims: [dims[0] ?? 0] });
}

function norm(
  out: VaeParameter[],
  wan: string,
  diffusers: string,
  dim: number,
  images = false,
): void {
  // Wan's RMS_norm keeps gamma broadcastable over (t, h, w), or (h, w) on per-frame images.
  out.push({
    name: `${wan}.gamma`,
    diffusers: `${diffusers}.gamma`,
    dims: images ? [dim, 1, 1] : [dim, 1, 1, 1],
  });
}

/**
 * Every decoder tensor in forward order: `conv2` (diffusers' `post_quant_conv`) and `decoder.*`,
 * named as Wan's `WanVAE_` state_dict and diffusers' `AutoencoderKLWan` name them (the encoder's
 * tensors are not the decoder's).
 */
export function vaeDecoderParameters(config: WanVaeConfig): VaeParameter[] {
  const { zDim: z } = config;
  const dims = vaeDecoderDims(config);
  const out: VaeParameter[] = [];
  conv(out, 'conv2', 'post_quant_conv', [z, z, 1, 1, 1]);
  conv(out, 'decoder.conv1', 'decoder.conv_in', [dims[0] ?? 0, z, 3, 3, 3]);
  for (const layer of vaeDecoderLayers(config)) {
    const { wan, diffusers } = layer;
    if (layer.kind === 'residual') {
      const { cin, cout } = layer;
      norm(out, `${wan}.residual.0`, `${diffusers}.norm1`, cin);
      conv(out, `${wan}.residual.2`, `${diffusers}.conv1`, [cout, cin, 3, 3, 3]);
      norm(out, `${wan}.residual.3`, `${diffusers}.norm2`, cout);
      conv(out, `${wan}.residual.6`, `${diffusers}.conv2`, [cout, cout, 3, 3, 3]);
      if (cin !== cout)
        conv(out, `${wan}.shortcut`, `${diffusers}.conv_shortcut`, [cout, cin, 1, 1, 1]);
    } else if (layer.kind === 'attention') {
      const { dim } = layer;
      norm(out, `${wan}.norm`, `${diffusers}.norm`, dim, true);
      conv(out, `${wan}.to_qkv`, `${diffusers}.to_qkv`, [3 * dim, dim, 1, 1]);
      conv(out, `${wan}.proj`, `${diffusers}.proj`, [dim, dim, 1, 1]);
    } else {
      const { dim } = layer;
      conv(out, `${wan}.resample.1`, `${diffusers}.resample.1`, [dim / 2, dim, 3, 3]);
      if (layer.temporal)
        conv(out, `${wan}.time_conv`, `${diffusers}.time_conv`, [2 * dim, dim, 3, 1, 1]);
    }
  }
  const last = dims[dims.length - 1] ?? 0;
  norm(out, 'decoder.head.0', 'decoder.norm_out', last);
  conv(out, 'decoder.head.2', 'decoder.conv_out', [config.outChannels, last, 3, 3, 3]);
  return out;
}

/** The decoder's parameter names (Wan's) and dims, in forward order. */
export function vaeParameterShapes(config: WanVaeConfig): Map<string, number[]> {
  return new Map(vaeDecoderParameters(config).map((p) => [p.name, [...p.dims]]));
}

/**
 * The cache slots in forward order: `decoder.conv1`, each residual block's two convs, each
 * temporal upsampling's `time_conv`, `decoder.head.2` — 32 for Wan2.1.
 */
export function vaeCacheSlots(config: WanVaeConfig): VaeCacheSlot[] {
  const slots: VaeCacheSlot[] = [{ name: 'decoder.conv1', channels: config.zDim, scale: 1 }];
  for (const layer of vaeDecoderLayers(config)) {
    const scale = 2 ** layer.level;
    if (layer.kind === 'residual') {
      slots.push({ name: `${layer.wan}.residual.2`, channels: layer.cin, scale });
      slots.push({ name: `${layer.wan}.residual.6`, channels: layer.cout, scale });
    } else if (layer.kind === 'resample' && layer.temporal) {
      slots.push({ name: `${layer.wan}.time_conv`, channels: layer.dim, scale });
    }
  }
  const dims = vaeDecoderDims(config);
  const last = dims[dims.length - 1] ?? 0;
  slots.push({ name: 'decoder.head.2', channels: last, scale: 2 ** (config.dimMult.length - 1) });
  return slots;
}
