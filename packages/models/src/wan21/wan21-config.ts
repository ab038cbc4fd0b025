import { FlowfleetError } from '@flowfleet/errors';

/**
 * Hyper-parameters of a Wan2.1-structured text-to-video model (DiT + toy text encoder).
 * Field names follow /tmp/wan21-spec.md; the README's architecture section is the contract.
 */
export interface Wan21Config {
  /** Card-level name, e.g. `wan21-mini`. */
  readonly name: string;
  /** Latent channels C fed to the DiT. */
  readonly inChannels: number;
  /** Velocity channels; always equal to `inChannels` (kept for the Wan state_dict vocabulary). */
  readonly outChannels: number;
  /** Patch size (pt, ph, pw) of the Conv3d patch embedding. */
  readonly patch: readonly [number, number, number];
  /** Model width D. */
  readonly dim: number;
  /** Hidden width of each block's FFN. */
  readonly ffnDim: number;
  /** Length of the sinusoidal timestep embedding. */
  readonly freqDim: number;
  /** Attention heads nH; head dim d = dim / heads. */
  readonly heads: number;
  /** Number of transformer blocks. */
  readonly layers: number;
  /** Width of the context the text encoder emits and the DiT consumes. */
  readonly textDim: number;
  /** Tokens per prompt L. */
  readonly textLen: number;
  /** Vocabulary of the byte tokenizer: 256 bytes + the pad id 256. */
  readonly textVocab: number;
  /** Hidden width of the text encoder's MLP. */
  readonly textHidden: number;
  /** LayerNorm and RMSNorm epsilon. */
  readonly eps: number;
}

/** The pad token id of the byte tokenizer. */
export const PAD_TOKEN = 256;

/** The tiny configuration the CPU reference runs in tens of milliseconds. */
export const WAN21_MINI: Wan21Config = Object.freeze({
  name: 'wan21-mini',
  inChannels: 4,
  outChannels: 4,
  patch: Object.freeze([1, 2, 2] as const),
  dim: 128,
  ffnDim: 512,
  freqDim: 64,
  heads: 4,
  layers: 2,
  textDim: 64,
  textLen: 16,
  textVocab: 257,
  textHidden: 128,
  eps: 1e-6,
});

/**
 * The published Wan2.1-T2V-1.3B DiT hyper-parameters (Wan-AI/Wan2.1-T2V-1.3B config.json:
 * dim 1536, ffn_dim 8960, freq_dim 256, num_heads 12, num_layers 30, in_dim = out_dim 16,
 * text_dim 4096, text_len 512, patch_size [1, 2, 2], eps 1e-6). The text encoder here is the toy
 * byte-level stand-in, not umT5-XXL.
 */
export const WAN21_1_3B: Wan21Config = Object.freeze({
  name: 'wan21-1.3b',
  inChannels: 16,
  outChannels: 16,
  patch: Object.freeze([1, 2, 2] as const),
  dim: 1536,
  ffnDim: 8960,
  freqDim: 256,
  heads: 12,
  layers: 30,
  textDim: 4096,
  textLen: 512,
  textVocab: 257,
  textHidden: 4096,
  eps: 1e-6,
});

function invalid(message: string, details: Record<string, unknown>): FlowfleetError {
  return new FlowfleetError('MODEL_CONFIG_INVALID', message, { details });
}

function isPositiveInt(value: number): boolean {
  return Number.isInteger(value) && value > 0;
}

/**
 * Checks the structural constraints of a config (positive integer sizes, dim divisible by heads,
 * even head dim with at least one rotary pair per axis, even freqDim, outChannels = inChannels).
 * @throws MODEL_CONFIG_INVALID naming the offending field.
 */
export function validateWan21Config(config: Wan21Config): Wan21Config {
  const sizes = {
    inChannels: config.inChannels,
    outChannels: config.outChannels,
    dim: config.dim,
    ffnDim: config.ffnDim,
    freqDim: config.freqDim,
    heads: config.heads,
    layers: config.layers,
    textDim: config.textDim,
    textLen: config.textLen,
    textVocab: config.textVocab,
    textHidden: config.textHidden,
  };
  for (const [field, value] of Object.entries(sizes)) {
    if (!isPositiveInt(value))
      throw invalid(`${field} must be a positive integer`, { field, value });
  }
  if (config.patch.length !== 3 || !config.patch.every(isPositiveInt)) {
    throw invalid('patch must be three positive integers', { field: 'patch', value: config.patch });
  }
  if (config.outChannels !== config.inChannels) {
    throw invalid('outChannels must equal inChannels', { field: 'outChannels' });
  }
  if (config.dim % config.heads !== 0) {
    throw invalid('dim must be divisible by heads', { field: 'dim', dim: config.dim });
  }
  const headDim = config.dim / config.heads;
  if (headDim % 2 !== 0 || Math.floor(headDim / 2 / 3) < 1) {
    throw invalid('head dim must be even with at least 3 rotary pairs', {
      field: 'heads',
      headDim,
    });
  }
  if (config.freqDim % 2 !== 0) {
    throw invalid('freqDim must be even', { field: 'freqDim', value: config.freqDim });
  }
  if (config.textVocab < PAD_TOKEN + 1) {
    throw invalid('textVocab must hold the 256 bytes and the pad id', { field: 'textVocab' });
  }
  if (!(config.eps > 0)) throw invalid('eps must be positive', { field: 'eps', value: config.eps });
  return config;
}

/**
 * Builds a validated config from overrides on top of `base` (default: wan21-mini).
 * @throws MODEL_CONFIG_INVALID when the result breaks a structural constraint.
 */
export function createWan21Config(
  overrides: Partial<Wan21Config> = {},
  base: Wan21Config = WAN21_MINI,
): Wan21Config {
  const merged: Wan21Config = { ...base, ...overrides };
  const outChannels =
    overrides.outChannels ??
    (overrides.inChannels !== undefined ? overrides.inChannels : merged.outChannels);
  return Object.freeze(validateWan21Config({ ...merged, outChannels }));
}

/** Head dim d = dim / heads. */
export function headDim(config: Wan21Config): number {
  return config.dim / config.heads;
}

/** Values per patch token P = C·pt·ph·pw. */
export function patchValues(config: Wan21Config): number {
  const [pt, ph, pw] = config.patch;
  return config.outChannels * pt * ph * pw;
}
