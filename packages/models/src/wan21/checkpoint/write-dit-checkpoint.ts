import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FlowfleetError } from '@flowfleet/errors';
import {
  SafetensorsFileWriter,
  bfloat16ToFloat32,
  float32ToBfloat16,
  float32ToFloat16,
  planSafetensorsShards,
  type SafetensorsEntrySpec,
  type SafetensorsTensor,
} from '@flowfleet/formats';
import { initTensor } from '../init-weights.js';
import { parameterShapes } from '../parameter-shapes.js';
import { WAN21_DIT_CHECKPOINT_KEYS } from '../wan21-checkpoint-keys.js';
import { headDim, validateWan21Config, type Wan21Config } from '../wan21-config.js';

/**
 * The two published layouts of a Wan2.1 DiT checkpoint: diffusers'
 * (`transformer/diffusion_pytorch_model-0000N-of-0000M.safetensors` + its index, diffusers'
 * `WanTransformer3DModel` names) and Wan's own (`diffusion_pytorch_model.safetensors`,
 * `WanModel` names).
 */
export type Wan21DitLayout = 'diffusers' | 'wan';

/** The dtypes a checkpoint is written in. */
export type Wan21CheckpointDtype = 'F32' | 'BF16' | 'F16';

/** Options of {@link writeWan21DitCheckpoint}. */
export interface WriteDitCheckpointOptions {
  readonly config: Wan21Config;
  readonly layout: Wan21DitLayout;
  /** The checkpoint's root directory (diffusers': the pipeline directory). */
  readonly dir: string;
  /** Default 1. */
  readonly seed?: number;
  /** Default: BF16 for diffusers (as published), F32 for wan (as published). */
  readonly dtype?: Wan21CheckpointDtype;
  /** Diffusers' shards hold at most this many bytes (default 2 GB; see the card docs). */
  readonly maxShardBytes?: number;
  /** Called after each tensor is written. */
  readonly onTensor?: (name: string, written: number, total: number) => void;
}

/** What was written. */
export interface WrittenDitCheckpoint {
  /** The directory a worker is given (diffusers': `<dir>/transformer`). */
  readonly path: string;
  readonly files: readonly string[];
  readonly dtype: Wan21CheckpointDtype;
  readonly tensorBytes: number;
  readonly parameters: number;
}

/**
 * The default shard size: under Node's 2 GiB `readFile` limit (so a shard can be uploaded in one
 * read) and close to diffusers' own splits.
 */
export const DEFAULT_MAX_SHARD_BYTES = 2_000_000_000;

const ITEM_BYTES: Readonly<Record<Wan21CheckpointDtype, number>> = { F32: 4, BF16: 2, F16: 2 };

/** Diffusers' name of a card (Wan) parameter name. */
export function diffusersDitKey(name: string): string {
  const diffusers = WAN21_DIT_CHECKPOINT_KEYS.vocabularies.find((v) => v.name === 'diffusers');
  if (diffusers === undefined)
    throw new Error('the wan21 key maps lost their diffusers vocabulary');
  return diffusers.keyOf(name);
}

/** diffusers' transformer/config.json for `config`. */
function diffusersConfigJson(config: Wan21Config): Record<string, unknown> {
  return {
    _class_name: 'WanTransformer3DModel',
    _diffusers_version: '0.33.0',
    added_kv_proj_dim: null,
    attention_head_dim: headDim(config),
    cross_attn_norm: true,
    eps: config.eps,
    ffn_dim: config.ffnDim,
    freq_dim: config.freqDim,
    image_dim: null,
    in_channels: config.inChannels,
    num_attention_heads: config.heads,
    num_layers: config.layers,
    out_channels: config.outChannels,
    patch_size: [...config.patch],
    qk_norm: 'rms_norm_across_heads',
    rope_max_seq_len: 1024,
    text_dim: config.textDim,
  };
}

/** Wan's config.json for `config` (the keys of `WanModel.__init__`). */
function wanConfigJson(config: Wan21Config): Record<string, unknown> {
  return {
    _class_name: 'WanModel',
    dim: config.dim,
    eps: config.eps,
    ffn_dim: config.ffnDim,
    freq_dim: config.freqDim,
    in_dim: config.inChannels,
    model_type: 't2v',
    num_heads: config.heads,
    num_layers: config.layers,
    out_dim: config.outChannels,
    patch_size: [...config.patch],
    text_len: config.textLen,
  };
}

/**
 * The values of one parameter, on the bf16 grid (every value a bfloat16, as a bf16-trained
 * checkpoint's are), so the same seed writes the same weights in every dtype and layout.
 */
function gridValues(seed: number, name: string, dims: readonly number[], index: number) {
  return bfloat16ToFloat32(float32ToBfloat16(initTensor(seed, name, dims, index)));
}

function asDtype(values: Float32Array, dtype: Wan21CheckpointDtype, shape: readonly number[]) {
  if (dtype === 'F32') return { dtype, shape, data: values } satisfies SafetensorsTensor;
  if (dtype === 'BF16') return { dtype, shape, data: float32ToBfloat16(values) } as const;
  return { dtype, shape, data: float32ToFloat16(values) } as const;
}

/**
 * Writes a Wan2.1 DiT checkpoint of `config` with deterministic random weights (`initWeights`'
 * draws, rounded to bfloat16) in one of the two published layouts, one tensor in memory at a
 * time (a 1.3B checkpoint is 2.8 GB in bf16, 5.7 GB in f32), plus the layout's config.json.
 * @throws MODEL_CONFIG_INVALID for an invalid config; FMT_FILE_IO when a file cannot be written
 */
export async function writeWan21DitCheckpoint(
  options: WriteDitCheckpointOptions,
): Promise<WrittenDitCheckpoint> {
  const { config, layout, seed = 1 } = options;
  validateWan21Config(config);
  const dtype = options.dtype ?? (layout === 'diffusers' ? 'BF16' : 'F32');
  const shapes = parameterShapes(config);
  const sortedIndex = new Map([...shapes.keys()].sort().map((name, i) => [name, i]));
  const keyOf = layout === 'diffusers' ? diffusersDitKey : (name: string) => name;
  const entries: (SafetensorsEntrySpec & { readonly card: string })[] = [...shapes].map(
    ([card, shape]) => ({ card, name: keyOf(card), dtype, shape }),
  );
  const path = layout === 'diffusers' ? join(options.dir, 'transformer') : options.dir;
  const shards =
    layout === 'diffusers'
      ? planSafetensorsShards(
          entries,
          options.maxShardBytes ?? DEFAULT_MAX_SHARD_BYTES,
          'diffusion_pytorch_model',
        )
      : { shards: [{ file: 'diffusion_pytorch_model.safetensors', entries }] };
  try {
    await mkdir(path, { recursive: true });
    const configJson = layout === 'diffusers' ? diffusersConfigJson(config) : wanConfigJson(config);
    await writeFile(join(path, 'config.json'), `${JSON.stringify(configJson, null, 2)}\n`);
    if ('indexJson' in shards) await writeFile(join(path, shards.indexFile), shards.indexJson);
  } catch (cause) {
    throw new FlowfleetError('FMT_FILE_IO', `cannot write ${path}`, { details: { path }, cause });
  }
  const cardOf = new Map(entries.map((e) => [e.name, e.card]));
  const files: string[] = [];
  let written = 0;
  let parameters = 0;
  for (const shard of shards.shards) {
    const file = join(path, shard.file);
    const writer = await SafetensorsFileWriter.create(file, shard.entries, { format: 'pt' });
    try {
      for (const entry of shard.entries) {
        const card = cardOf.get(entry.name)!;
        const values = gridValues(seed, card, entry.shape, sortedIndex.get(card)!);
        await writer.write(entry.name, asDtype(values, dtype, entry.shape));
        parameters += values.length;
        options.onTensor?.(entry.name, ++written, entries.length);
      }
      await writer.close();
    } catch (error) {
      await writer.abort();
      throw error;
    }
    files.push(file);
  }
  return { path, files, dtype, tensorBytes: parameters * ITEM_BYTES[dtype], parameters };
}
