import { float32ToBfloat16 } from '@flowfleet/formats';
import { isSharedTensor } from '@flowfleet/platform';
import { describe, expect, it } from 'vitest';
import { decodeCheckpointTensor } from './decode-checkpoint-tensor.js';

describe('decodeCheckpointTensor', () => {
  it('decodes each tensor into a SharedArrayBuffer of its own (F32 copied out of the range, BF16 widened)', () => {
    const values = Float32Array.of(1, -2, 0.5, 3);
    // The range sits inside a larger fetched buffer, as a byte-range fetch delivers it.
    const fetched = new Uint8Array(64);
    fetched.set(new Uint8Array(values.buffer), 16);
    const raw = fetched.subarray(16, 32);
    const f32 = decodeCheckpointTensor('w', { dtype: 'F32', shape: [2, 2] }, raw);
    expect(isSharedTensor(f32)).toBe(true);
    expect(f32.data.buffer.byteLength).toBe(16); // not the whole fetched buffer
    expect([...(f32.data as Float32Array)]).toEqual([...values]);
    const bf16 = float32ToBfloat16(values);
    const widened = decodeCheckpointTensor(
      'w',
      { dtype: 'BF16', shape: [4] },
      new Uint8Array(bf16.buffer),
    );
    expect(isSharedTensor(widened)).toBe(true);
    expect([...(widened.data as Float32Array)]).toEqual([...values]);
  });
});
