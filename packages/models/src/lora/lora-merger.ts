import { moduleWorkerUrl, type ComputePool, type TensorData } from '@flowfleet/platform';
import type { LoraMergeInput } from './merge-lora.js';

const HANDLER_ID = 'lora-merge';

/**
 * LoRA merges on a compute pool, off the event loop: each layer is one call to the least loaded
 * thread, so a many-layer adapter spreads over the pool's threads and rollouts interleave with it.
 * A shared W (`sharedTensor`: a resident version) goes over shared — the merge only reads it and
 * writes W' to a new SharedArrayBuffer, which comes back shared; W over an ordinary buffer is
 * copied (the caller keeps it). A and B are copied and moved.
 */
export class LoraMerger {
  private constructor(readonly pool: ComputePool) {}

  /**
   * Loads the merge handler into every thread of `pool` (idempotent per pool).
   * @throws PLAT_COMPUTE_HANDLER_FAILED, PLAT_COMPUTE_POOL_CLOSED
   */
  static async attach(pool: ComputePool): Promise<LoraMerger> {
    await pool.load({
      id: HANDLER_ID,
      url: moduleWorkerUrl(import.meta.url, 'lora-merge-handler'),
    });
    return new LoraMerger(pool);
  }

  /** How many merges keep the pool busy (one per thread). */
  get parallelism(): number {
    return this.pool.size;
  }

  /**
   * W + s·B·A for one layer (`mergeLoraWeight`, in a compute thread).
   * @throws PLAT_COMPUTE_THREAD_EXITED, PLAT_COMPUTE_POOL_CLOSED
   */
  async merge(input: LoraMergeInput): Promise<Float32Array> {
    const { pool } = this;
    const thread = pool.pick();
    const shared = input.weight.buffer instanceof SharedArrayBuffer;
    const weight = shared ? input.weight : input.weight.slice();
    const down = input.down.slice();
    const up = input.up.slice();
    const transfer = [down.buffer, up.buffer];
    if (!shared) transfer.push(weight.buffer as ArrayBuffer);
    const reply = await pool.dispatch(thread, {}, () =>
      thread.call<Record<string, TensorData>>(
        HANDLER_ID,
        'merge',
        { ...input, weight, down, up },
        transfer,
      ),
    );
    return reply['merged']!.data as Float32Array;
  }
}
