import { FlowfleetError } from '@flowfleet/errors';
import type { ClipGeometry, DecoderForward, FrameDecoder } from '../../decode/frame-decoder.js';
import { decodeVaeClip } from './vae-clip-decode.js';
import {
  vaeFrameCount,
  vaeSpatialFactor,
  vaeTemporalFactor,
  type WanVaeConfig,
} from './vae-config.js';

/** Latent frames a causal Wan decode needs for clip frames 0 … lastFrame (frame 0 ← latent 0). */
export function vaeLatentFramesFor(config: WanVaeConfig, lastFrame: number): number {
  return lastFrame === 0 ? 1 : Math.ceil(lastFrame / vaeTemporalFactor(config)) + 1;
}

function checkDims(config: WanVaeConfig, dims: readonly number[], length: number): void {
  const [channels = 0, frames = 0, height = 0, width = 0] = dims;
  if (
    dims.length !== 4 ||
    channels !== config.zDim ||
    ![frames, height, width].every((d) => Number.isInteger(d) && d > 0) ||
    length !== channels * frames * height * width
  ) {
    throw new FlowfleetError(
      'MODEL_INPUT_INVALID',
      `a sample's latent must be float32 [${config.zDim}, F, h, w]`,
      { details: { input: 'latent', dims: [...dims], values: length } },
    );
  }
}

/**
 * The wan21 frame decoder: component `componentId` (a `vae_decoder` of `config`) decodes a
 * sample's latent [z, F, h, w] one latent frame per forward with the explicit causal cache
 * (`decodeVaeClip`), stopping after the latent frame that yields `lastFrame`: the causal rule
 * makes the first frames of a shorter latent the first frames of the whole clip.
 */
export function createVaeFrameDecoder(config: WanVaeConfig, componentId = 'vae'): FrameDecoder {
  return Object.freeze({
    componentId,
    clip(latentDims: readonly number[]): ClipGeometry {
      const [, frames = 1, height = 1, width = 1] = latentDims;
      const s = vaeSpatialFactor(config);
      return { frames: vaeFrameCount(config, frames), height: height * s, width: width * s };
    },
    async decode(
      latent: Float32Array,
      latentDims: readonly number[],
      lastFrame: number,
      forward: DecoderForward,
    ): Promise<Float32Array> {
      checkDims(config, latentDims, latent.length);
      const [z = 0, frames = 0, h = 0, w = 0] = latentDims;
      const clipFrames = vaeFrameCount(config, frames);
      if (!Number.isInteger(lastFrame) || lastFrame < 0 || lastFrame >= clipFrames) {
        throw new FlowfleetError('MODEL_INPUT_INVALID', `frame ${lastFrame} is not in the clip`, {
          details: { input: 'lastFrame', value: lastFrame, frames: clipFrames },
        });
      }
      const used = vaeLatentFramesFor(config, lastFrame);
      const plane = h * w;
      const head = new Float32Array(z * used * plane);
      for (let c = 0; c < z; c++) {
        head.set(
          latent.subarray(c * frames * plane, (c * frames + used) * plane),
          c * used * plane,
        );
      }
      const clip = await decodeVaeClip(
        config,
        { dtype: 'float32', dims: [1, z, used, h, w], data: head },
        forward,
      );
      const [, channels = 0, decoded = 0, height = 0, width = 0] = clip.dims;
      const pixels = height * width;
      const keep = lastFrame + 1;
      const data = clip.data as Float32Array;
      const out = new Float32Array(channels * keep * pixels);
      for (let c = 0; c < channels; c++) {
        out.set(
          data.subarray(c * decoded * pixels, (c * decoded + keep) * pixels),
          c * keep * pixels,
        );
      }
      return out;
    },
  });
}
