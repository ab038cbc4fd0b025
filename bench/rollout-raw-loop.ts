// The raw baseline of bench:rollout and bench:fleet: the wan21 denoise loop written straight
// against captured forwards (no runtime) — the pool's captured forwards (bench:rollout) or bare
// onnxruntime-node sessions (bench:fleet, bench/lib/raw-ort-sessions.ts) — and a clock that
// times every forward so the bench can tell forward time from what surrounds it.
import type { Wan21Config } from '@flowfleet/models/wan21';
import { tokenize } from '@flowfleet/models/wan21';
import {
  cfgCombine,
  flowGrpoStdDev,
  flowSdeStep,
  gaussianNoise,
  linearShiftSigmas,
} from '@flowfleet/numerics';
import type { ComponentForward, WeightSet } from '@flowfleet/platform';
import type { RawForward } from './lib/raw-ort-sessions.js';

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
  readonly encoder: RawForward;
  readonly dit: RawForward;
}

/** The forwards' input dims of a workload: what the runtime captures each component for. */
export function rawInputDims(w: Pick<RawWorkload, 'config' | 'seeds' | 'shape'>) {
  const { config, seeds, shape } = w;
  const g = seeds.length;
  return {
    encoder: { tokens: [2, config.textLen] },
    dit: {
      latent: [2 * g, config.inChannels, shape.frames, shape.height, shape.width],
      timestep: [2 * g],
      context: [2 * g, config.textLen, config.textDim],
    },
  };
}

export async function captureRaw(
  dit: ComponentForward,
  encoder: ComponentForward,
  w: RawWorkload,
): Promise<RawSessions & { dispose(): Promise<void> }> {
  const dims = rawInputDims(w);
  const encoderForward = await encoder.capture!(w.textEncoderWeights, dims.encoder);
  const ditForward = await dit.capture!(w.ditWeights, dims.dit);
  return {
    encoder: encoderForward,
    dit: ditForward,
    dispose: async () => {
      await ditForward.dispose();
      await encoderForward.dispose();
    },
  };
}

/**
 * One rollout group: text-encode [uncond, cond] once, then per step one CFG-batched DiT forward
 * (2G), cfg_combine, and the FlowGRPO SDE step per sample. Every buffer is allocated once per
 * rollout and written in place (each step's samples straight into the trajectory), so the loop
 * adds no more than the maths and the forwards: a floor for any runtime.
 */
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
  seeds.forEach((seed, k) =>
    gaussianNoise(seed, 0, size, latents.subarray(k * size, (k + 1) * size)),
  );
  const dims = [2 * g, config.inChannels, shape.frames, shape.height, shape.width];
  const batch = new Float32Array(2 * n);
  const timestep = new Float32Array(2 * g);
  const v = new Float32Array(n);
  const noise = new Float32Array(size);
  const mean = new Float32Array(size);
  for (let i = 0; i < steps; i++) {
    const x = latents.subarray(i * n, (i + 1) * n);
    batch.set(x, 0);
    batch.set(x, n);
    timestep.fill(1000 * sigmas[i]!);
    const out = await sessions.dit.run({
      latent: { dtype: 'float32', dims, data: batch },
      timestep: { dtype: 'float32', dims: [2 * g], data: timestep },
      context: { dtype: 'float32', dims: [2 * g, config.textLen, config.textDim], data: context },
    });
    const vel = out['velocity']!.data as Float32Array;
    cfgCombine(vel.subarray(0, n), vel.subarray(n), guidanceScale, v);
    const stdDevT = flowGrpoStdDev(sigmas, i, noiseLevel);
    for (let k = 0; k < g; k++) {
      const lo = k * size;
      const step = flowSdeStep({
        x: x.subarray(lo, lo + size),
        v: v.subarray(lo, lo + size),
        sigma: sigmas[i]!,
        sigmaNext: sigmas[i + 1]!,
        stdDevT,
        noise: gaussianNoise(seeds[k]!, 1 + i, size, noise),
        out: { sample: latents.subarray((i + 1) * n + lo, (i + 1) * n + lo + size), mean },
      });
      logProbs[i * g + k] = step.logProb;
    }
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
