import { FlowfleetError } from '@flowfleet/errors';
import type { cfgCombine, flowMatchStep, flowSdeStep } from '@flowfleet/numerics';
import { SOLVER_OP } from '@flowfleet/platform';
import type { StepOverride, StepResult } from '../../loop/loop-types.js';
import { f32Tensor } from '../../loop/runtime-tensor.js';
import { arenaBytes, type StepIO } from '../../loop/step-io.js';

/** The fixed geometry of one rollout's denoise steps. */
export interface DenoiseGeometry {
  /** Samples in the group. */
  readonly group: number;
  /** Latent dims of one sample [C, F, H, W]. */
  readonly latentDims: readonly [number, number, number, number];
  /** Elements of one sample's latent. */
  readonly sampleSize: number;
  readonly textLen: number;
  readonly textDim: number;
  /** True when the forward batch is [uncond ×G, cond ×G]. */
  readonly cfg: boolean;
  /** Forward batch: 2G with CFG, else G. */
  readonly batch: number;
  readonly sampler: 'ode' | 'sde';
}

/** One denoise step's inputs (the graph inputs of the capturable form). */
export interface DenoiseInputs {
  /** Current latents [G, C, F, H, W]. */
  readonly x: Float32Array;
  /** SDE noise [G, C, F, H, W] (stream 1 + i of each seed); absent for ODE. */
  readonly noise?: Float32Array;
  /** t = 1000·σ_i for each forward row [batch]. */
  readonly timestep: Float32Array;
  /** Text context [batch, L, textDim]. */
  readonly context: Float32Array;
  /** [σ_i, σ_{i+1}, std_dev_t, guidance scale] in float64. */
  readonly scalars: Float64Array;
}

/** A denoise step's result: the next latents, the velocity used and per-sample log-probs. */
export interface DenoiseStepResult extends StepResult {
  readonly tensors: {
    readonly sample: Float32Array;
    readonly velocity: Float32Array;
    readonly log_probs: Float64Array;
  };
}

/** Scratch bytes a captured denoise step carves from its arena (same order as the compute). */
export function denoiseWorkspaceBytes(geo: DenoiseGeometry): number {
  const n = geo.group * geo.sampleSize;
  return arenaBytes([
    ...(geo.cfg
      ? [
          { itemBytes: 4 as const, length: 2 * n },
          { itemBytes: 4 as const, length: n },
        ]
      : []),
    { itemBytes: 4, length: n },
    ...(geo.sampler === 'sde' ? [{ itemBytes: 4 as const, length: n }] : []),
    { itemBytes: 8, length: geo.group },
  ]);
}

async function velocityOf(
  io: StepIO,
  geo: DenoiseGeometry,
  inputs: DenoiseInputs,
): Promise<Float32Array> {
  const n = geo.group * geo.sampleSize;
  let latent = inputs.x;
  if (geo.cfg) {
    latent = io.f32('dit_latent', 2 * n);
    latent.set(inputs.x, 0);
    latent.set(inputs.x, n);
  }
  const out = await io.forward({
    latent: f32Tensor(latent, [geo.batch, ...geo.latentDims]),
    timestep: f32Tensor(inputs.timestep, [geo.batch]),
    context: f32Tensor(inputs.context, [geo.batch, geo.textLen, geo.textDim]),
  });
  const velocity = out['velocity'];
  if (
    velocity === undefined ||
    !(velocity.data instanceof Float32Array) ||
    velocity.data.length !== geo.batch * geo.sampleSize
  ) {
    throw new FlowfleetError(
      'INTERNAL_ERROR',
      'the dit forward returned no float32 velocity of the batch size',
      {
        details: { outputs: Object.keys(out), expected: geo.batch * geo.sampleSize },
      },
    );
  }
  if (!geo.cfg) return velocity.data;
  const cfg = io.kernel<typeof cfgCombine>(SOLVER_OP.cfg);
  return cfg(
    velocity.data.subarray(0, n),
    velocity.data.subarray(n, 2 * n),
    inputs.scalars[3]!,
    io.f32('velocity', n),
  );
}

/**
 * One denoise step: the forward on the CFG batch (or the override's velocity), cfg_combine, then
 * per sample the Euler or FlowGRPO SDE kernel. Eager and captured forms run exactly this code,
 * differing only in `io`; the returned tensors are copies the caller owns.
 */
export async function computeDenoiseStep(
  io: StepIO,
  geo: DenoiseGeometry,
  inputs: DenoiseInputs,
  override?: StepOverride,
): Promise<DenoiseStepResult> {
  const n = geo.group * geo.sampleSize;
  let velocity: Float32Array;
  if (override !== undefined) {
    if (override.velocity.length !== n) {
      // An interceptor's velocity stands in for the forward's output: the same contract holds.
      throw new FlowfleetError(
        'MODEL_INPUT_INVALID',
        `override velocity from ${override.source} has ${override.velocity.length} values, expected ${n}`,
        { details: { input: 'override.velocity', length: override.velocity.length, expected: n } },
      );
    }
    velocity = override.velocity;
  } else velocity = await velocityOf(io, geo, inputs);
  const sigma = inputs.scalars[0]!;
  const sigmaNext = inputs.scalars[1]!;
  const stdDevT = inputs.scalars[2]!;
  const sample = io.f32('sample', n);
  const mean = geo.sampler === 'sde' ? io.f32('mean', n) : undefined;
  const logProbs = io.f64('log_probs', geo.group);
  const size = geo.sampleSize;
  if (geo.sampler === 'sde') {
    const sde = io.kernel<typeof flowSdeStep>(SOLVER_OP.sde);
    for (let g = 0; g < geo.group; g++) {
      const lo = g * size;
      const hi = lo + size;
      const out = sample.subarray(lo, hi);
      const step = sde({
        x: inputs.x.subarray(lo, hi),
        v: velocity.subarray(lo, hi),
        sigma,
        sigmaNext,
        stdDevT,
        noise: inputs.noise!.subarray(lo, hi),
        out: { sample: out, mean: mean!.subarray(lo, hi) },
      });
      // A kernel may ignore `out` (e.g. one that computes elsewhere): keep its result.
      if (step.sample !== out) out.set(step.sample);
      logProbs[g] = step.logProb;
    }
  } else {
    const euler = io.kernel<typeof flowMatchStep>(SOLVER_OP.euler);
    for (let g = 0; g < geo.group; g++) {
      const lo = g * size;
      const hi = lo + size;
      const out = sample.subarray(lo, hi);
      const next = euler(
        inputs.x.subarray(lo, hi),
        velocity.subarray(lo, hi),
        sigma,
        sigmaNext,
        out,
      );
      if (next !== out) out.set(next);
      logProbs[g] = 0;
    }
  }
  return {
    tensors: { sample: sample.slice(), velocity: velocity.slice(), log_probs: logProbs.slice() },
  };
}
