import { describe, expect, it } from 'vitest';
import type { RandomAccessBytes } from '../safetensors/safetensors-file.js';
import { SafetensorsFileReader } from '../safetensors/safetensors-file.js';
import { writeSafetensors } from '../safetensors/write-safetensors.js';
import { readSafetensors } from '../safetensors/read-safetensors.js';
import { readRolloutFile } from './read-rollout-file.js';
import { RolloutFrames } from './rollout-frames.js';
import { validV2VectorSpecs } from './vectors/v2-valid-vectors.js';
import { validVectorSpecs } from './vectors/valid-vectors.js';
import { writeRolloutFile } from './write-rollout-file.js';

/** `bytes` as RandomAccessBytes that hands out at most `chunk` bytes a read (as a stream does). */
function memoryBytes(bytes: Uint8Array, chunk = 7): RandomAccessBytes {
  return {
    name: 'memory',
    sizeBytes: bytes.length,
    async read(target, position) {
      const part = bytes.subarray(
        position,
        Math.min(bytes.length, position + target.length, position + chunk),
      );
      target.set(part);
      return part.length;
    },
  };
}

async function framesOf(
  bytes: Uint8Array,
): Promise<{ frames: RolloutFrames | null; reader: SafetensorsFileReader }> {
  const reader = await SafetensorsFileReader.open(memoryBytes(bytes));
  return { frames: await RolloutFrames.open(reader), reader };
}

describe('RolloutFrames', () => {
  const withFrames = validV2VectorSpecs().filter((spec) => spec.record.frames != null);

  it.each(withFrames.map((spec) => [spec.name, spec] as const))(
    '%s: every frame equals the whole-file reader’s, reading only the header, indices and that frame',
    async (_name, spec) => {
      const bytes = writeRolloutFile(spec.record);
      const whole = readRolloutFile(bytes);
      const { frames, reader } = await framesOf(bytes);
      expect(frames).not.toBeNull();
      expect(Array.from(frames!.frameIndices)).toEqual(Array.from(whole.frameIndices!));
      expect(frames!.video).toEqual(whole.video);
      expect(frames!.group).toBe(whole.group);
      const header = reader.bytesRead;
      expect(header).toBe(reader.header.dataStart + 4 * whole.frameIndices!.length);
      for (let g = 0; g < whole.group; g++) {
        for (let at = 0; at < whole.frameIndices!.length; at++) {
          const before = reader.bytesRead;
          expect(await frames!.frame(g, at)).toEqual(whole.frame(g, at));
          expect(reader.bytesRead - before).toBe(frames!.frameBytes);
        }
      }
    },
  );

  it('is null for a file without frames (v1, and v2 with video null)', async () => {
    const v1 = validVectorSpecs()[0]!.record;
    const noVideo = validV2VectorSpecs().find((spec) => spec.name === 'window-no-frames')!;
    for (const record of [v1, noVideo.record]) {
      expect((await framesOf(writeRolloutFile(record))).frames).toBeNull();
    }
  });

  it('refuses out-of-range samples and frames', async () => {
    const { frames } = await framesOf(writeRolloutFile(withFrames[0]!.record));
    for (const [sample, at] of [
      [-1, 0],
      [frames!.group, 0],
      [0, frames!.frameIndices.length],
      [0, 0.5],
    ] as const) {
      await expect(frames!.frame(sample, at)).rejects.toMatchObject({
        code: 'FMT_INVALID_ARGUMENT',
      });
    }
  });

  it('refuses a file whose frame tensors break the spec', async () => {
    const good = readSafetensors(writeRolloutFile(withFrames[1]!.record));
    const rewrite = (
      name: string,
      replace: (data: Uint8Array | Int32Array) => Record<string, unknown>,
    ) => {
      const tensors = Object.fromEntries(
        [...good.tensors].map(([key, tensor]) => [
          key,
          key === name ? { ...tensor, ...replace(tensor.data as Uint8Array) } : tensor,
        ]),
      );
      return writeSafetensors(tensors as Parameters<typeof writeSafetensors>[0], good.metadata);
    };
    const decreasing = rewrite('frame_indices', () => ({ data: Int32Array.of(0, 4, 2) }));
    await expect(framesOf(decreasing)).rejects.toMatchObject({
      code: 'FMT_ROLLOUT_INVALID',
      details: { reason: 'frame-indices' },
    });
    const wrongDtype = rewrite('frames', (data) => ({ dtype: 'I8', data: Int8Array.from(data) }));
    await expect(framesOf(wrongDtype)).rejects.toMatchObject({
      code: 'FMT_ROLLOUT_INVALID',
      details: { reason: 'tensor-dtype' },
    });
  });
});
