import { canonicalJson } from '../canonical-json.js';
import { SAFETENSORS_ITEM_BYTES, elementCount } from './dtypes.js';
import { SAFETENSORS_INDEX_SUFFIX } from './safetensors-checkpoint.js';
import type { SafetensorsEntrySpec } from './safetensors-layout.js';

/** One file of a sharded checkpoint: its name and the tensors it holds. */
export interface SafetensorsShardPlan {
  readonly file: string;
  readonly entries: readonly SafetensorsEntrySpec[];
}

/** A sharded checkpoint's files and the text of its `*.safetensors.index.json`. */
export interface SafetensorsShardsPlan {
  readonly shards: readonly SafetensorsShardPlan[];
  /** The index's file name: `<stem>.safetensors.index.json`. */
  readonly indexFile: string;
  /** `{"metadata":{"total_size":N},"weight_map":{tensor: file}}`, canonical JSON. */
  readonly indexJson: string;
}

/**
 * Splits tensors into shards the way huggingface_hub's `split_torch_state_dict_into_shards`
 * (what diffusers' and transformers' `save_pretrained` call) does: in the given order, a new shard
 * starts when the next tensor would take the current one past `maxShardBytes` (a tensor larger
 * than that gets a shard of its own). Files are `<stem>-0000N-of-0000M.safetensors` and
 * the index is `<stem>.safetensors.index.json` with `metadata.total_size` (the tensors' bytes).
 */
export function planSafetensorsShards(
  entries: readonly SafetensorsEntrySpec[],
  maxShardBytes: number,
  stem: string,
): SafetensorsShardsPlan {
  const groups: SafetensorsEntrySpec[][] = [];
  let current: SafetensorsEntrySpec[] = [];
  let currentBytes = 0;
  let totalBytes = 0;
  for (const entry of entries) {
    const bytes = elementCount(entry.shape) * SAFETENSORS_ITEM_BYTES[entry.dtype];
    if (current.length > 0 && currentBytes + bytes > maxShardBytes) {
      groups.push(current);
      current = [];
      currentBytes = 0;
    }
    current.push(entry);
    currentBytes += bytes;
    totalBytes += bytes;
  }
  if (current.length > 0) groups.push(current);
  const pad = (n: number): string => String(n).padStart(5, '0');
  const shards = groups.map((group, i) => ({
    file: `${stem}-${pad(i + 1)}-of-${pad(groups.length)}.safetensors`,
    entries: group,
  }));
  const weightMap: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const shard of shards) for (const entry of shard.entries) weightMap[entry.name] = shard.file;
  return {
    shards,
    indexFile: `${stem}${SAFETENSORS_INDEX_SUFFIX}`,
    indexJson: canonicalJson({ metadata: { total_size: totalBytes }, weight_map: weightMap }),
  };
}
