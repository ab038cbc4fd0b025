// The baseline of bench:rollout: the wan21 denoise loop written straight against captured ORT
// sessions (no runtime), and a clock that times every forward so the bench can tell forward time
// from what surrounds it.
import type { Wan21Config } from '@flowfleet/models';
import { tokenize } from '@flowfleet/models';
import {
  cfgCombine,
  flowGrpoStdDev,
  flowSdeStep,
  gaussianNoise,
  linearShiftSigmas,
} from '@flowfleet/numerics';
import type { CapturedForward, ComponentForward, WeightSet } from '@flowfleet/platform';

/** What the raw loop runs: the same request the runtime gets. */
export interface RawWorkload {
  readonly config: Wan21Config;
  readonly prompt: string;
  readonly seeds: readonly number[];
  readonly steps: number;
  readonly shift: number;
  readonly guidanceScale: number;
  readonly noiseLevel: number;
  readonly shape: { readonly frames: number; readonly height: number; readonly width: number };
  readonly ditWeights: WeightSet;
  readonly textEncoderWeights: WeightSet;
}

/** The raw loop: the same maths as the runtime's denoise loop, written straight against sessions. */
export interface RawSessions {
  readonly encoder: CapturedForward;
  readonly dit: CapturedForward;
}

export async function captureRaw(
  dit: ComponentForward,
  encoder: ComponentForward,
  w: RawWorkload,
): Promise<RawSessions> {
  const { config, seeds, shape } = w;
  const g = seeds.length;
  const latentDims = [2 * g, config.inChannels, shape.frames, shape.height, shape.width];
  return {
    encoder: await encoder.capture!(w.textEncoderWeights, {
      tokens: [2, config.textLen],
    }),
    dit: await dit.capture!(w.ditWeights, {
      latent: latentDims,
      timestep: [2 * g],
      context: [2 * g, config.textLen, config.textDim],
    }),
  };
}

export async function rawRollout(
  sessions: RawSessions,
  w: RawWorkload,
): Promise<{ latents: Float32Array; logProbs: Float64Array }> {
  const { config, seeds, shape, steps, shift, prompt, guidanceScale, noiseLevel } = w;
  const g = seeds.length;
  const size = config.inChannels * shape.frames * shape.height * shape.width;
  const n = g * size;
  const tokens = BigInt64Array.from(tokenize(['', prompt], config), (t) => BigInt(t));
  const encoded = await sessions.encoder.run({
    tokens: { dtype: 'int64', dims: [2, config.textLen], data: tokens },
  });
  const ctx = encoded['context']!.data as Float32Array;
  const row = config.textLen * config.textDim;
  const context = new Float32Array(2 * g * row);
  for (let b = 0; b < 2 * g; b++)
    context.set(ctx.subarray(b < g ? 0 : row, b < g ? row : 2 * row), b * row);
  const sigmas = linearShiftSigmas(steps, shift);
  const latents = new Float32Array((steps + 1) * n);
  const logProbs = new Float64Array(steps * g);
  let x = new Float32Array(n);
  seeds.forEach((seed, k) => gaussianNoise(seed, 0, size, x.subarray(k * size, (k + 1) * size)));
  latents.set(x, 0);
  const dims = [2 * g, config.inChannels, shape.frames, shape.height, shape.width];
  for (let i = 0; i < steps; i++) {
    const batch = new Float32Array(2 * n);
    batch.set(x, 0);
    batch.set(x, n);
    const out = await sessions.dit.run({
      latent: { dtype: 'float32', dims, data: batch },
      timestep: {
        dtype: 'float32',
        dims: [2 * g],
        data: new Float32Array(2 * g).fill(1000 * sigmas[i]!),
      },
      context: { dtype: 'float32', dims: [2 * g, config.textLen, config.textDim], data: context },
    });
    const vel = out['velocity']!.data as Float32Array;
    const v = cfgCombine(vel.subarray(0, n), vel.subarray(n), guidanceScale);
    const stdDevT = flowGrpoStdDev(sigmas, i, noiseLevel);
    const next = new Float32Array(n);
    for (let k = 0; k < g; k++) {
      const lo = k * size;
      const step = flowSdeStep({
        x: x.subarray(lo, lo + size),
        v: v.subarray(lo, lo + size),
        sigma: sigmas[i]!,
        sigmaNext: sigmas[i + 1]!,
        stdDevT,
        noise: gaussianNoise(seeds[k]!, 1 + i, size),
      });
      next.set(step.sample, lo);
      logProbs[i * g + k] = step.logProb;
    }
    x = next;
    latents.set(x, (i + 1) * n);
  }
  return { latents, logProbs };
}

/** Milliseconds spent inside forwards (component runs and captured runs) since the last take(). */
export class ForwardClock {
  #ms = 0;
  take(): number {
    const ms = this.#ms;
    this.#ms = 0;
    return ms;
  }
  /** Times every eager run and every run of a forward captured from `component`. */
  instrument(component: ComponentForward): void {
    const run = component.run.bind(component);
    const capture = component.capture?.bind(component);
    const target = component as {
      run: ComponentForward['run'];
      capture?: ComponentForward['capture'];
    };
    target.run = (inputs, weightSet) => this.time(() => run(inputs, weightSet));
    if (capture === undefined) return;
    target.capture = async (weightSet, dims) => {
      const forward = await capture(weightSet, dims);
      return {
        ...forward,
        bytesHeld: forward.bytesHeld,
        run: (inputs) => this.time(() => forward.run(inputs)),
        dispose: () => forward.dispose(),
      };
    };
  }
  async time<T>(fn: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await fn();
    } finally {
      this.#ms += performance.now() - started;
    }
  }
}
