import {
  eagerIO,
  isLatentsOnly,
  keptLatentSteps,
  selectedFrameIndices,
  type ModelCard,
  type ResolvedSamplingRequest,
  type RolloutTrajectory,
  type StepInstance,
} from '@flowfleet/models';
import type { RolloutVideo } from '@flowfleet/formats';
import { FlowfleetError } from '@flowfleet/errors';

/** What a rollout returns beyond its trajectory's small tensors (RolloutFile v2's additions). */
export interface RolloutOutputs {
  /** The kept latents [K, G, ...latentDims] and the step of each row. */
  readonly latents: Float32Array;
  readonly latentSteps: Int32Array;
  /** Present (possibly null) exactly when the result is a v2 file: the decoded clip's geometry. */
  readonly video?: RolloutVideo | null;
  readonly frameIndices: Int32Array | null;
  /** U8 [G, N, H, W, 3]. */
  readonly frames: Uint8Array | null;
  /** Wall time of the decode (0 without frames). */
  readonly decodeMs: number;
}

/**
 * One float in [−1, 1] as a byte: round(clamp((v + 1) / 2, 0, 1) · 255) in float64, ties to even
 * (diffusers' postprocess followed by numpy's round; RolloutFile v2 § 4.1).
 */
export function pixelByte(value: number): number {
  const scaled = Math.min(Math.max((value + 1) / 2, 0), 1) * 255;
  const floor = Math.floor(scaled);
  const rest = scaled - floor;
  if (rest > 0.5 || (rest === 0.5 && floor % 2 === 1)) return floor + 1;
  return floor;
}

/**
 * Copies clip frames `indices` of a decoded clip (float32 [3, n, H, W], channel-first) into
 * `out` at `offset` as [N, H, W, 3] RGB bytes.
 */
export function writeRgbFrames(
  clip: Float32Array,
  clipFrames: number,
  pixels: number,
  indices: readonly number[],
  out: Uint8Array,
  offset: number,
): void {
  let at = offset;
  for (const f of indices) {
    for (let p = 0; p < pixels; p++) {
      for (let c = 0; c < 3; c++) out[at++] = pixelByte(clip[(c * clipFrames + f) * pixels + p]!);
    }
  }
}

function keptRows(trajectory: RolloutTrajectory, steps: readonly number[]): Float32Array {
  const rowSize = trajectory.group * trajectory.latentDims.reduce((a, b) => a * b, 1);
  const out = new Float32Array(steps.length * rowSize);
  steps.forEach((t, k) =>
    out.set(trajectory.latents.subarray(t * rowSize, (t + 1) * rowSize), k * rowSize),
  );
  return out;
}

/**
 * The outputs a request asked for: its kept latent rows (`keepLatents`), and when it asked for
 * frames, each sample's final latent decoded by the card's frame decoder — one sample at a time,
 * through the decoder component's forward on the compute pool, with the rollout's pinned weights —
 * up to the last requested frame, as uint8 RGB. A latents-only request returns what it always did
 * (every row, no `video`: a v1 file).
 * @throws MODEL_INVALID_REQUEST when frames are asked of a card without a decoder (the card's
 *   request rules refuse that first), MODEL_INPUT_INVALID from the decoder
 */
export async function rolloutOutputs(
  card: ModelCard,
  instance: StepInstance,
  request: ResolvedSamplingRequest,
  trajectory: RolloutTrajectory,
): Promise<RolloutOutputs> {
  const steps = keptLatentSteps(request.keepLatents, request.steps);
  const latentSteps = Int32Array.from(steps);
  const latents = request.keepLatents === 'all' ? trajectory.latents : keptRows(trajectory, steps);
  const base = { latents, latentSteps, frameIndices: null, frames: null, decodeMs: 0 };
  if (isLatentsOnly(request.decodeFrames, request.keepLatents)) return base;
  if (request.decodeFrames === 'none') return { ...base, video: null };
  const decoder = card.frameDecoder;
  if (decoder === undefined) {
    throw new FlowfleetError(
      'MODEL_INVALID_REQUEST',
      `decodeFrames: card ${card.id} has no frame decoder`,
      {
        details: { field: 'decodeFrames', value: JSON.stringify(request.decodeFrames) },
      },
    );
  }
  const started = performance.now();
  const { latentDims, group } = trajectory;
  const clip = decoder.clip(latentDims);
  const indices = selectedFrameIndices(request.decodeFrames, clip.frames);
  const lastFrame = indices.at(-1) ?? 0;
  const pixels = clip.height * clip.width;
  const frames = new Uint8Array(group * indices.length * pixels * 3);
  const io = eagerIO(instance, decoder.componentId);
  const sampleSize = latentDims.reduce((a, b) => a * b, 1);
  const finalRow = request.steps * group * sampleSize;
  for (let g = 0; g < group; g++) {
    const start = finalRow + g * sampleSize;
    const latent = trajectory.latents.subarray(start, start + sampleSize);
    const decoded = await decoder.decode(latent, latentDims, lastFrame, io.forward);
    writeRgbFrames(
      decoded,
      lastFrame + 1,
      pixels,
      indices,
      frames,
      g * indices.length * pixels * 3,
    );
  }
  return {
    ...base,
    video: { frames: clip.frames, height: clip.height, width: clip.width },
    frameIndices: Int32Array.from(indices),
    frames,
    decodeMs: performance.now() - started,
  };
}
