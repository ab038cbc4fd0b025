import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  readRolloutFile,
  RolloutFrames,
  SafetensorsFileReader,
  writeRolloutFile,
  type RolloutMetadata,
  type RolloutRecord,
} from '@flowfleet/formats';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ByteRange, OpenedObject } from './blob-store.js';
import { FsBlobStore } from './blob-store.js';
import { storedResultBytes } from './stored-result-bytes.js';

/** The filesystem store, counting the bytes its result opens give out. */
class CountingStore extends FsBlobStore {
  resultBytesOpened = 0;

  override async openResult(
    jobId: string,
    file: 'result.safetensors' | 'summary.json',
    range?: ByteRange,
  ): Promise<OpenedObject | undefined> {
    const opened = await super.openResult(jobId, file, range);
    // An open without a range is only sized (its stream is dropped unread).
    if (opened !== undefined && range !== undefined) this.resultBytesOpened += opened.sizeBytes;
    return opened;
  }
}

let root: string;
let store: CountingStore;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'flowfleet-result-bytes-'));
  store = new CountingStore(root);
  await store.init();
});
afterEach(async () => {
  await store.close();
  await rm(root, { recursive: true, force: true });
});

/** A v2 result whose latents (every step of a 16×4×30×52 latent, G = 2) dwarf its frames. */
function bigRecord(): RolloutRecord {
  const steps = 4;
  const group = 2;
  const latentDims = [16, 4, 30, 52];
  const latentSize = latentDims.reduce((a, b) => a * b, 1);
  const video = { frames: 13, height: 24, width: 40 };
  const frameIndices = [0, 4, 8, 12];
  const sigmas = Float64Array.from({ length: steps + 1 }, (_, i) => 1 - i / steps);
  return {
    metadata: {
      model: 'toy-dit',
      loopId: 'toy.denoise',
      prompt: 'a red fox',
      negativePrompt: '',
      sampler: 'sde',
      steps,
      group,
      latentDims,
      noiseLevel: 0.7,
      guidanceScale: 1,
      shift: 3,
      weightsVersions: { dit: 1 },
      backend: { dit: 'ort-cpu' },
      platform: { device: 'cpu', arch: 'x86-64-v3' },
      interceptors: [],
      video,
    } as RolloutMetadata,
    latents: Float32Array.from({ length: (steps + 1) * group * latentSize }, (_, i) => i % 7),
    logProbs: new Float64Array(steps * group).fill(-1),
    seeds: [1, 2],
    sigmas,
    timesteps: sigmas.slice(0, steps).map((s) => 1000 * s),
    stepIndices: Int32Array.from({ length: steps }, (_, i) => i),
    frameIndices: Int32Array.from(frameIndices),
    frames: Uint8Array.from(
      { length: group * frameIndices.length * video.height * video.width * 3 },
      (_, i) => (i * 13) % 256,
    ),
  };
}

describe('storedResultBytes', () => {
  it('reads one frame of a stored result with ranged reads: header, indices and that frame', async () => {
    const bytes = writeRolloutFile(bigRecord());
    await store.putResult('job-1', 'result.safetensors', [bytes], bytes.length);
    const source = await storedResultBytes(store, 'job-1');
    expect(source?.sizeBytes).toBe(bytes.length);
    const reader = await SafetensorsFileReader.open(source!);
    const frames = await RolloutFrames.open(reader);
    const frame = await frames!.frame(1, 2);
    expect(frame).toEqual(readRolloutFile(bytes).frame(1, 2));
    // 8 + header, 4 · N, H · W · 3: under 2 % of this 4 MB file.
    expect(reader.bytesRead).toBe(reader.header.dataStart + 4 * 4 + 24 * 40 * 3);
    expect(reader.bytesRead / bytes.length).toBeLessThan(0.02);
    expect(store.resultBytesOpened).toBe(reader.bytesRead);
    await reader.close();
  });

  it('is undefined without a stored result, and a read after removal is API_RESULT_NOT_FOUND', async () => {
    expect(await storedResultBytes(store, 'job-2')).toBeUndefined();
    const bytes = writeRolloutFile(bigRecord());
    await store.putResult('job-3', 'result.safetensors', [bytes], bytes.length);
    const source = await storedResultBytes(store, 'job-3');
    await store.deleteResult('job-3');
    await expect(source!.read(new Uint8Array(8), 0)).rejects.toMatchObject({
      code: 'API_RESULT_NOT_FOUND',
    });
  });
});
