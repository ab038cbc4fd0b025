import { createHash } from 'node:crypto';
import { isFlowfleetError } from '@flowfleet/errors';
import { float32ToBfloat16, writeSafetensors } from '@flowfleet/formats';
import { describe, expect, it } from 'vitest';
import { fetchTensors, planRanges, type RangeSource, type NeededTensor } from './tensor-fetcher.js';

const FILE = writeSafetensors({
  a: { dtype: 'F32', shape: [2], data: Float32Array.of(1, 2) },
  b: { dtype: 'BF16', shape: [2], data: float32ToBfloat16(Float32Array.of(3, -4)) },
  c: { dtype: 'F32', shape: [3], data: Float32Array.of(5, 6, 7) },
});
const N = Number(new DataView(FILE.buffer).getBigUint64(0, true));
const HEADER = JSON.parse(new TextDecoder().decode(FILE.subarray(8, 8 + N))) as Record<
  string,
  { dtype: string; shape: number[]; data_offsets: [number, number] }
>;

function needed(name: string, shard = 0): NeededTensor {
  const entry = HEADER[name]!;
  const [begin, end] = entry.data_offsets.map((offset) => 8 + N + offset) as [number, number];
  const sha256 = createHash('sha256').update(FILE.subarray(begin, end)).digest('hex');
  return {
    name: `card.${name}`,
    key: name,
    tensor: { shard, dtype: entry.dtype, shape: entry.shape, begin, end, sha256 },
  };
}

/** The shard's bytes served from memory, recording each range asked for. */
function memory(bytes: Uint8Array): RangeSource & { asked: [number, number][] } {
  const asked: [number, number][] = [];
  return {
    asked,
    async fetchRange(_sha256, start, end) {
      asked.push([start, end]);
      return bytes.slice(start, end);
    },
  };
}

const SHARDS = [{ sha256: 'f'.repeat(64), sizeBytes: FILE.length }];

describe('fetchTensors', () => {
  it('fetches tensors that lie end to end in one range, widened to float32', async () => {
    const source = memory(FILE);
    const all = ['c', 'a', 'b'].map((name) => needed(name));
    const { tensors, fetchedBytes } = await fetchTensors(source, SHARDS, all, { what: 'dit v1' });
    expect(source.asked).toEqual([[all[1]!.tensor.begin, all[0]!.tensor.end]]);
    expect(fetchedBytes).toBe(8 + 4 + 12);
    expect([...tensors.get('card.b')!.data]).toEqual([3, -4]);
    expect(tensors.get('card.b')!.dtype).toBe('float32');
    expect([...tensors.get('card.c')!.data]).toEqual([5, 6, 7]);
    // Without `b` the run breaks: two ranges.
    const gap = memory(FILE);
    await fetchTensors(gap, SHARDS, [needed('a'), needed('c')], { what: 'dit v1' });
    expect(gap.asked).toHaveLength(2);
    expect(planRanges(all, 12).map((r) => r.tensors.length)).toEqual([2, 1]);
  });

  it('refuses a tensor whose bytes do not match its digest, and returns nothing', async () => {
    const bad = Uint8Array.from(FILE);
    const at = needed('c').tensor.begin;
    bad[at] = bad[at]! ^ 1;
    let error: unknown;
    try {
      await fetchTensors(memory(bad), SHARDS, [needed('a'), needed('c')], { what: 'dit v2' });
    } catch (caught) {
      error = caught;
    }
    expect(isFlowfleetError(error, 'WORKER_BLOB_REFUSED')).toBe(true);
    expect((error as Error).message).toMatch(
      /^dit v2: tensor c: sha256 [0-9a-f]{64} does not match/,
    );
  });
});
