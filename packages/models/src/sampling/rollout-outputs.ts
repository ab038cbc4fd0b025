/**
 * Which frames of each sample's decoded clip a rollout returns: `none` (latents only, the
 * default), `first` (frame 0: DanceGRPO, FastVideo), `{every: k}` (frames 0, k, 2k, …: flow_grpo's
 * OCR reward uses every 4th), or `all`.
 */
export type FrameSelection = 'none' | 'first' | 'all' | { readonly every: number };

/**
 * Which trajectory latents a rollout keeps: `all` (x_0 … x_T, the default), or the window of
 * `steps` denoise steps from `fromStep` — each step's input and output, x_fromStep …
 * x_{fromStep + steps} — plus the final sample x_T (flow_grpo trains on a fraction of the steps).
 */
export type LatentKeep = 'all' | { readonly fromStep: number; readonly steps: number };

/** The clip frames a selection returns out of a clip of `clipFrames` frames (increasing). */
export function selectedFrameIndices(selection: FrameSelection, clipFrames: number): number[] {
  if (selection === 'none') return [];
  if (selection === 'first') return [0];
  const every = selection === 'all' ? 1 : selection.every;
  return Array.from({ length: Math.ceil(clipFrames / every) }, (_, i) => i * every);
}

/** The steps t whose latent x_t a rollout of `steps` denoise steps keeps (increasing, ends at T). */
export function keptLatentSteps(keep: LatentKeep, steps: number): number[] {
  if (keep === 'all') return Array.from({ length: steps + 1 }, (_, t) => t);
  const window = Array.from({ length: keep.steps + 1 }, (_, i) => keep.fromStep + i);
  return window.at(-1) === steps ? window : [...window, steps];
}

/** Whether a request returns exactly what a latents-only rollout always did (RolloutFile v1). */
export function isLatentsOnly(frames: FrameSelection, keep: LatentKeep): boolean {
  return frames === 'none' && keep === 'all';
}
