import type { TensorData, TensorMap } from '@flowfleet/platform';

/** The geometry of one sample's decoded clip. */
export interface ClipGeometry {
  readonly frames: number;
  readonly height: number;
  readonly width: number;
}

/** One forward of the decoder component (the runtime's, on the compute pool). */
export type DecoderForward = (inputs: TensorMap) => Promise<Readonly<Record<string, TensorData>>>;

/**
 * How a card turns a sample's final latent into video frames (its VAE decoder), in terms the
 * runtime can drive without knowing the model: which component runs the forwards, the clip a
 * latent decodes to, and the decode itself.
 */
export interface FrameDecoder {
  /** The card component whose forwards `decode` drives (its weights are pinned with the rollout's). */
  readonly componentId: string;
  /** The clip one sample's latent of `latentDims` decodes to. */
  clip(latentDims: readonly number[]): ClipGeometry;
  /**
   * Decodes one sample's latent (`latentDims`, float32) into its clip's frames 0 … `lastFrame`
   * (the rest are never computed when the decoder is causal): float32 [3, lastFrame + 1, H, W],
   * RGB in [−1, 1].
   * @throws MODEL_INPUT_INVALID for a latent of other dims
   */
  decode(
    latent: Float32Array,
    latentDims: readonly number[],
    lastFrame: number,
    forward: DecoderForward,
  ): Promise<Float32Array>;
}
