import type { ModelComponentSpec } from '@flowfleet/models';
import { gaussianNoise } from '@flowfleet/numerics';

/** Added to the group's standard deviation so a group of equal rewards gives advantages of 0. */
export const ADVANTAGE_EPSILON = 1e-6;

/**
 * The demo's reward: the mean of latent channel 0 of the final latent x_T over frames × height ×
 * width (a deterministic stand-in for a reward model; `latent` is one sample, [C, F, H, W]).
 */
export function channelZeroMean(latent: ArrayLike<number>, dims: readonly number[]): number {
  const [channels = 1] = dims;
  const perChannel = latent.length / channels;
  let sum = 0;
  for (let i = 0; i < perChannel; i++) sum += latent[i] ?? 0;
  return perChannel === 0 ? 0 : sum / perChannel;
}

/**
 * Group-normalised advantages (FlowGRPO / GRPO): (r − mean) / (std + ε) over one prompt's group,
 * with the population standard deviation.
 */
export function groupAdvantages(rewards: readonly number[]): number[] {
  const n = rewards.length;
  if (n === 0) return [];
  const mean = rewards.reduce((a, b) => a + b, 0) / n;
  const variance = rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / n;
  const std = Math.sqrt(variance);
  return rewards.map((r) => (r - mean) / (std + ADVANTAGE_EPSILON));
}

/** A weights map as a card component's `initWeights` returns it. */
export type WeightsMap = ReturnType<ModelComponentSpec['initWeights']>;

/**
 * The demo's "trainer update": every tensor moves by `scale` × its RMS × N(0, 1) noise drawn from
 * Philox (seed `seed`, stream = tensor index), so the new version is deterministic and close to
 * the old one (a stand-in for an optimiser step).
 */
export function perturbWeights(weights: WeightsMap, seed: number, scale: number): WeightsMap {
  const next: WeightsMap = new Map();
  [...weights.entries()].forEach(([name, tensor], index) => {
    const data = tensor.data as Float32Array;
    let squares = 0;
    for (const value of data) squares += value * value;
    const rms = Math.sqrt(squares / Math.max(1, data.length));
    const noise = gaussianNoise(seed, index, data.length);
    const moved = new Float32Array(data.length);
    for (let i = 0; i < data.length; i++) moved[i] = (data[i] ?? 0) + scale * rms * (noise[i] ?? 0);
    next.set(name, { ...tensor, data: moved });
  });
  return next;
}
