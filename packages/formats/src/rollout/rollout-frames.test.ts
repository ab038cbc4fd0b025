import { describe, expect, it } from 'vitest';
import type { RandomAccessBytes } from '../safetensors/safetensors-file.js';
import { SafetensorsFileReader } from '../safetensors/safetensors-file.js';
import { writeSafetensors } from '../safetensors/write-safetensors.js';
import { readSafetensors } from '../safetensors/read-safetensors.js';
import { readRolloutFile } from './read-rollout-file.js';
import { RolloutFrames } from './rollout-frames.js';
import type { RolloutMetadata, RolloutVideo } from './rollout-metadata.js';
import type { RolloutRecord } from './rollout-record.js';
import { writeRolloutFile } from './write-rollout-file.js';

interface Shape {
  readonly name: string;
  readonly group: number;
  /** v2's geometry; undefined writes v1, null a v2 file without frames. */
  readonly video?: RolloutVideo | null;
  readonly frameIndices?: readonly number[];
  readonly latentSteps?: readonly number[];
}

/** A rollout record of `shape` (T = 3, latent [4, 2, 1, 1]) with frames that differ per byte. */
function record(shape: Shape): RolloutRecord {
  const steps = 3;
  const { group: g, video, frameIndices = [] } = shape;
  const latentSteps = shape.latentSteps ?? [0, 1, 2, 3];
  const sigmas = Float64Array.from({ length: steps + 1 }, (_, i) => 1 - i / steps);
  const frameBytes = video ? g * frameIndices.length * video.height * video.width * 3 : 0;
  return {
    metadata: {
      model: 'toy-dit',
      loopId: 'toy.denoise',
      prompt: 'a red fox',
      negativePrompt: '',
      sampler: 'sde',
      steps,
      group: g,
      latentDims: [4, 2, 1, 1],
      noiseLevel: 0.7,
      guidanceScale: 1,
      shift: 3,
      weightsVersions: { dit: 1 },
      backend: { dit: 'ort-cpu' },
      platform: { device: 'cpu', arch: 'x86-64-v3' },
      interceptors: [],
      ...(video === undefined ? {} : { video }),
    } as RolloutMetadata,
    latents: Float32Array.from({ length: latentSteps.length * g * 8 }, (_, i) => i / 8),
    logProbs: new Float64Array(steps * g).fill(-1),
    seeds: Array.from({ length: g }, (_, i) => i + 1),
    sigmas,
    timesteps: sigmas.slice(0, steps).map((s) => 1000 * s),
    stepIndices: Int32Array.from({ length: steps }, (_, i) => i),
    ...(video === undefined ? {} : { latentSteps: Int32Array.from(latentSteps) }),
    ...(video
      ? {
          frameIndices: Int32Array.from(frameIndices),
          frames: Uint8Array.from({ length: frameBytes }, (_, i) => (i * 37 + (i >> 8)) % 256),
        }
      : {}),
  };
}

const WITH_FRAMES: readonly Shape[] = [
  {
    name: 'first frame, G=2',
    group: 2,
    video: { frames: 5, height: 2, width: 3 },
    frameIndices: [0],
  },
  {
    name: 'every 2nd frame and a kept-steps window, G=2',
    group: 2,
    video: { frames: 5, height: 3, width: 2 },
    frameIndices: [0, 2, 4],
    latentSteps: [1, 2, 3],
  },
  {
    name: 'every frame, G=1',
    group: 1,
    video: { frames: 5, height: 1, width: 2 },
    frameIndices: [0, 1, 2, 3, 4],
  },
];

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
  it.each(WITH_FRAMES.map((shape) => [shape.name, shape] as const))(
    '%s: every frame equals the whole-file reader’s, reading only the header, indices and that frame',
    async (_name, shape) => {
      const bytes = writeRolloutFile(record(shape));
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
    const v1 = record({ name: 'v1', group: 2 });
    const noVideo = record({ name: 'window', group: 2, video: null, latentSteps: [2, 3] });
    for (const file of [v1, noVideo]) {
      expect((await framesOf(writeRolloutFile(file))).frames).toBeNull();
    }
  });

  it('refuses out-of-range samples and frames', async () => {
    const { frames } = await framesOf(writeRolloutFile(record(WITH_FRAMES[0]!)));
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
    const good = readSafetensors(writeRolloutFile(record(WITH_FRAMES[1]!)));
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
