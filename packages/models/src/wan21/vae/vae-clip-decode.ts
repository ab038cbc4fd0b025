import { FlowfleetError } from '@flowfleet/errors';
import type { TensorData, TensorMap } from '@flowfleet/platform';
import {
  vaeFrameCount,
  vaeSpatialFactor,
  vaeTemporalFactor,
  type WanVaeConfig,
} from './vae-config.js';
import { VAE_IO } from './vae-graph.js';
import { vaeCacheSlots } from './vae-plan.js';

function invalidInput(message: string, details: Record<string, unknown>): FlowfleetError {
  return new FlowfleetError('MODEL_INPUT_INVALID', message, { details });
}

/**
 * The input dims of one decode step for `batch` samples of an h×w latent: `latent`
 * [B, z, 1, h, w], `frame_index` [1] and every cache slot [B, C, 2, h·s, w·s].
 */
export function vaeStepInputDims(
  config: WanVaeConfig,
  batch: number,
  height: number,
  width: number,
): Record<string, number[]> {
  const dims: Record<string, number[]> = {
    [VAE_IO.latent]: [batch, config.zDim, 1, height, width],
    [VAE_IO.frameIndex]: [1],
  };
  for (const slot of vaeCacheSlots(config)) {
    dims[VAE_IO.cacheIn(slot.name)] = [
      batch,
      slot.channels,
      2,
      height * slot.scale,
      width * slot.scale,
    ];
  }
  return dims;
}

/**
 * The decode of one clip as steps, for a caller that runs the `vae_decoder` component (a loop's
 * work plans, a script): `inputs(i)` for latent frame i (the caches the previous step returned;
 * zeros before frame 0), `accept(i, outputs)` keeps that step's frames and caches, `frames()`
 * the whole clip [B, 3, 1 + 4(T − 1), 8h, 8w] once every step is in. Steps run in order.
 */
export class VaeClipDecode {
  readonly batch: number;
  readonly steps: number;
  readonly height: number;
  readonly width: number;
  #cache: TensorMap | undefined;
  #done = 0;
  readonly #frames: Float32Array;
  #framesWritten = 0;

  /** @throws MODEL_INPUT_INVALID for a latent that is not float32 [B, z, T ≥ 1, h, w]. */
  constructor(
    readonly config: WanVaeConfig,
    readonly latent: TensorData,
  ) {
    const [batch = 0, channels = 0, steps = 0, height = 0, width = 0] = latent.dims;
    if (
      !(latent.data instanceof Float32Array) ||
      latent.dims.length !== 5 ||
      channels !== config.zDim ||
      ![batch, steps, height, width].every((d) => Number.isInteger(d) && d > 0) ||
      latent.data.length !== batch * channels * steps * height * width
    ) {
      throw invalidInput(`latent must be float32 [B, ${config.zDim}, T, h, w]`, {
        input: 'latent',
        dims: latent.dims,
        dtype: latent.dtype,
      });
    }
    this.batch = batch;
    this.steps = steps;
    this.height = height;
    this.width = width;
    this.#frames = new Float32Array(this.frameDims().reduce((a, b) => a * b, 1));
  }

  /** [B, 3, 1 + 4(T − 1), 8h, 8w]. */
  frameDims(): number[] {
    const s = vaeSpatialFactor(this.config);
    const frames = vaeFrameCount(this.config, this.steps);
    return [this.batch, this.config.outChannels, frames, this.height * s, this.width * s];
  }

  /** The inputs of step `index` (the next one to run). */
  inputs(index: number): TensorMap {
    this.#expect(index);
    const { batch, height, width } = this;
    const z = this.config.zDim;
    const plane = height * width;
    const frame = new Float32Array(batch * z * plane);
    const src = this.latent.data as Float32Array;
    for (let bc = 0; bc < batch * z; bc++) {
      const from = (bc * this.steps + index) * plane;
      frame.set(src.subarray(from, from + plane), bc * plane);
    }
    const inputs: Record<string, TensorData> = {
      [VAE_IO.latent]: { dtype: 'float32', dims: [batch, z, 1, height, width], data: frame },
      [VAE_IO.frameIndex]: { dtype: 'int64', dims: [1], data: BigInt64Array.of(BigInt(index)) },
    };
    const dims = vaeStepInputDims(this.config, batch, height, width);
    for (const slot of vaeCacheSlots(this.config)) {
      const name = VAE_IO.cacheIn(slot.name);
      const shape = dims[name] ?? [];
      inputs[name] = this.#cache?.[name] ?? {
        dtype: 'float32',
        dims: shape,
        data: new Float32Array(shape.reduce((a, b) => a * b, 1)),
      };
    }
    return inputs;
  }

  /**
   * Takes step `index`'s outputs: its frames go to their place in the clip, its caches feed the
   * next step. @throws MODEL_INPUT_INVALID when an output is missing or of other dims.
   */
  accept(index: number, outputs: Readonly<Record<string, TensorData>>): void {
    this.#expect(index);
    const frames = outputs[VAE_IO.frames];
    const n = index === 0 ? 1 : vaeTemporalFactor(this.config);
    const [b, c, , hh, ww] = this.frameDims();
    const want = [b, c, n, hh, ww];
    if (!(frames?.data instanceof Float32Array) || frames.dims.join() !== want.join()) {
      throw invalidInput('decode step frames of the wrong dims', {
        output: VAE_IO.frames,
        dims: frames?.dims,
        expected: want,
      });
    }
    const next: Record<string, TensorData> = {};
    for (const slot of vaeCacheSlots(this.config)) {
      const cache = outputs[VAE_IO.cacheOut(slot.name)];
      if (cache === undefined)
        throw invalidInput('a decode step returned no cache', { slot: slot.name });
      next[VAE_IO.cacheIn(slot.name)] = cache;
    }
    // Copy [B, C, n, H, W] into frames [first, first + n) of [B, C, F, H, W].
    const total = this.frameDims()[2] ?? 0;
    const plane = (hh ?? 0) * (ww ?? 0);
    for (let bc = 0; bc < (b ?? 0) * (c ?? 0); bc++) {
      const from = bc * n * plane;
      this.#frames.set(
        frames.data.subarray(from, from + n * plane),
        (bc * total + this.#framesWritten) * plane,
      );
    }
    this.#framesWritten += n;
    this.#cache = next;
    this.#done += 1;
  }

  /** Whether every step has been accepted. */
  get done(): boolean {
    return this.#done === this.steps;
  }

  /** The clip's frames, once `done`. */
  frames(): TensorData {
    if (!this.done)
      throw new Error(`VaeClipDecode.frames() before step ${this.#done} of ${this.steps}`);
    return { dtype: 'float32', dims: this.frameDims(), data: this.#frames };
  }

  #expect(index: number): void {
    // A defect of the caller's loop, not an input error.
    if (index !== this.#done)
      throw new Error(`decode step ${index} out of order (next is ${this.#done})`);
  }
}

/**
 * Decodes a whole clip with `runStep` (one forward of the `vae_decoder` component per latent frame).
 * @throws MODEL_INPUT_INVALID for a latent or step outputs of the wrong dims
 */
export async function decodeVaeClip(
  config: WanVaeConfig,
  latent: TensorData,
  runStep: (inputs: TensorMap) => Promise<Readonly<Record<string, TensorData>>>,
): Promise<TensorData> {
  const clip = new VaeClipDecode(config, latent);
  for (let i = 0; i < clip.steps; i++) clip.accept(i, await runStep(clip.inputs(i)));
  return clip.frames();
}
