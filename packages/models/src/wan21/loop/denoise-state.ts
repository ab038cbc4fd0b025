import { gaussianNoise } from '@flowfleet/numerics';
import type { DenoiseGeometry } from './denoise-step.js';
import type { RolloutLoopRequest } from '../../loop/rollout-loop.js';

/**
 * Everything one rollout of the denoise loop holds: the request, the schedule, the text context,
 * the current latents and the recorded trajectory. Nothing per request lives anywhere else.
 */
export class DenoiseLoopState {
  readonly request: RolloutLoopRequest;
  readonly geometry: DenoiseGeometry;
  readonly sigmas: Float64Array;
  /** t_i = 1000·σ_i for i = 0..T−1. */
  readonly timesteps: Float64Array;
  /** Latents x_0..x_T of every sample: [T + 1, G, C, F, H, W]. */
  readonly trajectory: Float32Array;
  /** Per-step, per-sample log-probs [T, G] (0 for the ODE sampler). */
  readonly logProbs: Float64Array;
  /** Text context of the forward batch [batch, L, textDim]; set by the encode step. */
  context: Float32Array | undefined;
  /** Current latents [G, C, F, H, W]. */
  latents: Float32Array;
  /** Index of the next denoise step. */
  step = 0;

  constructor(request: RolloutLoopRequest, geometry: DenoiseGeometry) {
    this.request = request;
    this.geometry = geometry;
    this.sigmas = request.sigmas;
    const steps = request.steps;
    this.timesteps = new Float64Array(steps);
    for (let i = 0; i < steps; i++) this.timesteps[i] = 1000 * this.sigmas[i]!;
    const n = geometry.group * geometry.sampleSize;
    this.trajectory = new Float32Array((steps + 1) * n);
    this.logProbs = new Float64Array(steps * geometry.group);
    this.latents = new Float32Array(n);
    request.seeds.forEach((seed, g) => {
      const size = geometry.sampleSize;
      gaussianNoise(seed, 0, size, this.latents.subarray(g * size, (g + 1) * size));
    });
    this.trajectory.set(this.latents, 0);
  }

  /** The SDE noise of step i for every sample: stream 1 + i of each seed. */
  noiseFor(step: number): Float32Array {
    const size = this.geometry.sampleSize;
    const noise = new Float32Array(this.geometry.group * size);
    this.request.seeds.forEach((seed, g) => {
      gaussianNoise(seed, 1 + step, size, noise.subarray(g * size, (g + 1) * size));
    });
    return noise;
  }
}
