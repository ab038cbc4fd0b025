import {
  SafetensorsFileReader,
  openSafetensorsCheckpoint,
  type SafetensorsShardFile,
} from '@flowfleet/formats';
import type { TensorData } from '@flowfleet/platform';
import type { ModelComponentSpec } from '../cards/model-card.js';
import { bindCheckpoint, type CheckpointEntry } from './bind-checkpoint.js';
import { decodeCheckpointTensor } from './decode-checkpoint-tensor.js';

/**
 * Loads a component's weights from a checkpoint on disk — a safetensors file, or a directory with
 * one or with an index and its shards (`openSafetensorsCheckpoint`), in any of the card's key
 * vocabularies (`bindCheckpoint`) — one tensor read at a time and widened to float32, so the
 * file is never held whole beside the weights. The same binding and decoding a worker applies to
 * a synced checkpoint.
 * @returns card name → float32 tensor, in the component's parameter order
 * @throws FMT_CHECKPOINT_INVALID, FMT_SAFETENSORS_INVALID, FMT_FILE_IO (the files);
 *   MODEL_WEIGHTS_MISMATCH (the keys, shapes or dtypes do not fit the component)
 */
export async function loadCheckpoint(
  spec: ModelComponentSpec,
  path: string,
): Promise<Map<string, TensorData>> {
  const checkpoint = await openSafetensorsCheckpoint(path);
  const holder = new Map<string, SafetensorsShardFile>();
  const entries = new Map<string, CheckpointEntry>();
  for (const shard of checkpoint.shards) {
    for (const [key, entry] of shard.header.tensors) {
      holder.set(key, shard);
      entries.set(key, entry);
    }
  }
  const bound = bindCheckpoint(spec, entries);
  const readers = new Map<string, SafetensorsFileReader>();
  const tensors = new Map<string, TensorData>();
  try {
    for (const [name, key] of bound) {
      const shard = holder.get(key)!;
      let reader = readers.get(shard.path);
      if (reader === undefined) {
        reader = await SafetensorsFileReader.open(shard.path);
        readers.set(shard.path, reader);
      }
      const tensor = await reader.readTensor(key);
      const raw = new Uint8Array(
        tensor.data.buffer,
        tensor.data.byteOffset,
        tensor.data.byteLength,
      );
      tensors.set(name, decodeCheckpointTensor(key, entries.get(key)!, raw));
    }
  } finally {
    for (const reader of readers.values()) await reader.close();
  }
  return tensors;
}
