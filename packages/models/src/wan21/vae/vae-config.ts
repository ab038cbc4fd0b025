import { FlowfleetError } from '@flowfleet/errors';

/**
 * Hyper-parameters of a Wan2.1-structured VAE decoder. Field names follow diffusers'
 * `AutoencoderKLWan` config (camelCase); `temporalUpsample` is in decoder order (Wan's
 * `temperal_downsample[::-1]`). The PyTorch twin is python/src/flowfleet/torch/vae_config.py.
 */
export interface WanVaeConfig {
  readonly name: string;
  /** Latent channels. */
  readonly zDim: number;
  /** Base width; stage widths are baseDim·m. */
  readonly baseDim: number;
  /** Width multipliers of the encoder stages (the decoder runs them reversed). */
  readonly dimMult: readonly number[];
  /** Residual blocks per encoder stage; each decoder stage has one more. */
  readonly numResBlocks: number;
  /** Per decoder stage boundary (dimMult.length − 1): whether that upsampling doubles frames too. */
  readonly temporalUpsample: readonly boolean[];
  /** Output (pixel) channels. */
  readonly outChannels: number;
  /** Per-channel latent statistics: the decoder sees z·std + mean. */
  readonly latentsMean: readonly number[];
  readonly latentsStd: readonly number[];
}

/**
 * The published Wan2.1 VAE's decoder (`Wan2.1_VAE.pth`, diffusers' `AutoencoderKLWan`): z_dim 16,
 * base 96, multipliers 1/2/4/4, 2 residual blocks per encoder stage, temporal downsampling
 * [False, True, True]; the latent mean/std are Wan's `WanVAE.mean/std` (diffusers'
 * `latents_mean/std`). 73,295,603 parameters in 108 tensors.
 */
export const WAN21_VAE: WanVaeConfig = Object.freeze({
  name: 'wan2.1-vae',
  zDim: 16,
  baseDim: 96,
  dimMult: Object.freeze([1, 2, 4, 4]),
  numResBlocks: 2,
  temporalUpsample: Object.freeze([true, true, false]),
  outChannels: 3,
  latentsMean: Object.freeze([
    -0.7571, -0.7089, -0.9113, 0.1075, -0.1745, 0.9653, -0.1517, 1.5508, 0.4134, -0.0715, 0.5517,
    -0.3632, -0.1922, -0.9497, 0.2503, -0.2921,
  ]),
  latentsStd: Object.freeze([
    2.8184, 1.4541, 2.3275, 2.6558, 1.2196, 1.7708, 2.6052, 2.0743, 3.2687, 2.1526, 2.8652, 1.5579,
    1.6382, 1.1253, 2.8251, 1.916,
  ]),
});

/**
 * A reduced decoder of the same structure (tests, small cards): uneven multipliers so that three
 * of the four stages change width and every upsampling halves a different width.
 */
export const WAN21_VAE_MINI: WanVaeConfig = Object.freeze({
  name: 'wan2.1-vae-mini',
  zDim: 4,
  baseDim: 8,
  dimMult: Object.freeze([1, 2, 3, 4]),
  numResBlocks: 1,
  temporalUpsample: Object.freeze([true, true, false]),
  outChannels: 3,
  latentsMean: Object.freeze([-0.5, 0.25, 0.9, -0.1]),
  latentsStd: Object.freeze([2.5, 1.25, 0.8, 1.9]),
});

function invalid(message: string, field: string, value?: unknown): FlowfleetError {
  return new FlowfleetError('MODEL_CONFIG_INVALID', message, { details: { field, value } });
}

const isPositiveInt = (v: unknown): boolean => Number.isInteger(v) && (v as number) > 0;

/** Widths [middle, stage 0 out, stage 1 out, …]: baseDim·[m_last, m_last, …, m_0]. */
export function vaeDecoderDims(config: WanVaeConfig): number[] {
  const mult = [config.dimMult[config.dimMult.length - 1] ?? 1, ...[...config.dimMult].reverse()];
  return mult.map((m) => config.baseDim * m);
}

/** Pixels per latent position along height and width (8 for Wan2.1). */
export function vaeSpatialFactor(config: WanVaeConfig): number {
  return 2 ** (config.dimMult.length - 1);
}

/** Frames each latent frame after the first becomes (4 for Wan2.1). */
export function vaeTemporalFactor(config: WanVaeConfig): number {
  return 2 ** config.temporalUpsample.filter(Boolean).length;
}

/** Frames T latent frames decode to: 1 + 4(T − 1) for Wan2.1. */
export function vaeFrameCount(config: WanVaeConfig, latentFrames: number): number {
  return 1 + vaeTemporalFactor(config) * (latentFrames - 1);
}

/**
 * Checks a config's structure (the PyTorch twin's `validate`).
 * @throws MODEL_CONFIG_INVALID naming the field.
 */
export function validateWanVaeConfig(config: WanVaeConfig): WanVaeConfig {
  for (const field of ['zDim', 'baseDim', 'numResBlocks', 'outChannels'] as const) {
    if (!isPositiveInt(config[field])) {
      throw invalid(`${field} must be a positive integer`, field, config[field]);
    }
  }
  if (config.dimMult.length < 2 || !config.dimMult.every(isPositiveInt)) {
    throw invalid('dimMult must be at least two positive integers', 'dimMult', config.dimMult);
  }
  if (
    config.temporalUpsample.length !== config.dimMult.length - 1 ||
    !config.temporalUpsample.every((t) => typeof t === 'boolean')
  ) {
    throw invalid(
      'temporalUpsample must hold one boolean per upsampling (dimMult.length − 1)',
      'temporalUpsample',
      config.temporalUpsample,
    );
  }
  // Each upsampling's 2D conv halves the width it receives (Wan2.1's Resample: dim → dim / 2).
  if (
    vaeDecoderDims(config)
      .slice(1, -1)
      .some((d) => d % 2 !== 0)
  ) {
    throw invalid('every upsampled stage width baseDim·m must be even', 'baseDim', config.baseDim);
  }
  for (const field of ['latentsMean', 'latentsStd'] as const) {
    const values = config[field];
    if (values.length !== config.zDim || !values.every((v) => Number.isFinite(v))) {
      throw invalid(`${field} must hold zDim finite numbers`, field, values);
    }
  }
  if (!config.latentsStd.every((v) => v > 0)) {
    throw invalid('latentsStd must be positive', 'latentsStd', config.latentsStd);
  }
  return config;
}
