import { FlowfleetError } from '@flowfleet/errors';
import type { SafetensorsFileReader } from '../safetensors/safetensors-file.js';
import {
  checkedTensorLayout,
  checkTensorEntry,
  parseMetadataStrings,
} from './read-rollout-file.js';
import type { RolloutVideo } from './rollout-metadata.js';
import { checkRolloutIndices, everyLatentStep, rolloutVideoOf } from './rollout-record.js';

/**
 * The frames of a RolloutFile v2 opened for random access: the clip's geometry, which frames it
 * holds, and one frame at a time. Reading a frame reads its H · W · 3 bytes and nothing else.
 */
export class RolloutFrames {
  /** Samples G. */
  readonly group: number;
  /** The decoded clip's geometry (frames F, height, width). */
  readonly video: RolloutVideo;
  /** The clip frames the file holds, strictly increasing (N of them). */
  readonly frameIndices: Int32Array;
  readonly #file: SafetensorsFileReader;

  private constructor(
    file: SafetensorsFileReader,
    group: number,
    video: RolloutVideo,
    frameIndices: Int32Array,
  ) {
    this.#file = file;
    this.group = group;
    this.video = video;
    this.frameIndices = frameIndices;
  }

  /**
   * The frames of the rollout file `file` reads, or null when it holds none (a v1 file, or a v2
   * file whose `video` is null). Reads the header (already read by `file`) and `frame_indices`
   * (4 · N bytes); checks the metadata, the tensor set, the frame tensors' dtypes and shapes
   * and the frame indices (docs/formats/rollout-file-v2.md § 7) — not the values of the tensors
   * it does not read.
   * @throws FMT_ROLLOUT_INVALID; whatever `file`'s reads throw
   */
  static async open(file: SafetensorsFileReader): Promise<RolloutFrames | null> {
    const metadata = parseMetadataStrings(file.header.metadata);
    const layout = checkedTensorLayout(metadata, file.header.tensors);
    const video = rolloutVideoOf(metadata);
    if (video === null) return null;
    for (const spec of layout) {
      if (spec.name === 'frame_indices' || spec.name === 'frames') {
        checkTensorEntry(spec, file.header.tensors.get(spec.name));
      }
    }
    const frameIndices = (await file.readTensor('frame_indices')).data as Int32Array;
    checkRolloutIndices(metadata, everyLatentStep(metadata.steps), frameIndices);
    return new RolloutFrames(file, metadata.group, video, frameIndices);
  }

  /** Bytes of one frame: H · W · 3. */
  get frameBytes(): number {
    return this.video.height * this.video.width * 3;
  }

  /**
   * The `at`-th returned frame of `sample` (clip frame `frameIndices[at]`) as row-major RGB bytes
   * [H, W, 3], read from the file.
   * @throws FMT_INVALID_ARGUMENT when `sample` or `at` is out of range; whatever the read throws
   */
  async frame(sample: number, at: number): Promise<Uint8Array> {
    for (const [name, value, size] of [
      ['sample', sample, this.group],
      ['frame', at, this.frameIndices.length],
    ] as const) {
      if (!Number.isInteger(value) || value < 0 || value >= size) {
        throw new FlowfleetError(
          'FMT_INVALID_ARGUMENT',
          `${name} ${value} is not in [0, ${size})`,
          {
            details: { argument: name, value, size },
          },
        );
      }
    }
    const offset = (sample * this.frameIndices.length + at) * this.frameBytes;
    return this.#file.readTensorBytes('frames', offset, this.frameBytes);
  }
}
