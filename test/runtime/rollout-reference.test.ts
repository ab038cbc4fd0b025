// The runtime end to end on the TS reference components (cpu kernels): capture semantics,
// reproducibility, log-prob recomputation, interleaving, interceptors and observers.
import { isFlowfleetError } from '@flowfleet/errors';
import { cfgCombine, flowGrpoStdDev, flowSdeStep, gaussianNoise } from '@flowfleet/numerics';
import {
  readRolloutFile,
  readSafetensors,
  writeRolloutFile,
  type RolloutRecord,
} from '@flowfleet/formats';
import { tokenize } from '@flowfleet/models/wan21';
import { ComputePool } from '@flowfleet/platform';
import {
  createNanWatch,
  createResidualSkip,
  runRollout,
  type ModelInstance,
  type RolloutResult,
  type StepObserver,
} from '@flowfleet/runtime';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { card, referenceInstance, sameBits, tinyRequest, weightsOf } from './runtime-fixtures.js';

let pool: ComputePool;
beforeAll(async () => {
  pool = await ComputePool.create();
});
afterAll(async () => {
  await pool.close();
});

const open: ModelInstance[] = [];
async function instance(): Promise<ModelInstance> {
  const created = await referenceInstance(pool);
  open.push(created);
  return created;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((i) => i.close()));
});

function expectSameTrajectory(a: RolloutResult, b: RolloutResult): void {
  expectSameRecord(a.record, b.record);
}

function expectSameRecord(a: RolloutRecord, b: RolloutRecord): void {
  expect(sameBits(a.latents, b.latents)).toBe(true);
  expect(sameBits(a.logProbs, b.logProbs)).toBe(true);
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return isFlowfleetError(error) ? error.code : `not coded: ${String(error)}`;
  }
  return 'no error';
}

describe('runRollout on the TS reference', () => {
  it('records the trajectory layout and captures once per graph', async () => {
    const inst = await instance();
    const result = await runRollout(inst, tinyRequest());
    const n = 4 * 1 * 4 * 4;
    expect(result.record.latents).toHaveLength(4 * 2 * n);
    expect(result.record.logProbs).toHaveLength(3 * 2);
    expect(Array.from(result.record.stepIndices)).toEqual([0, 1, 2]);
    expect(Array.from(result.record.timesteps)).toEqual(
      Array.from(result.record.sigmas.subarray(0, 3), (s) => 1000 * s),
    );
    expect(result.record.latents.subarray(0, n)).toEqual(gaussianNoise(11, 0, n));
    expect(result.record.logProbs!.every(Number.isFinite)).toBe(true);
    expect(result.record.metadata.weightsVersions).toEqual({ dit: 1, text_encoder: 1 });
    expect(result.record.metadata.backend).toEqual({
      dit: 'cpu-reference',
      text_encoder: 'cpu-reference',
    });
    expect(result.captureStats).toMatchObject({ captures: 2, replays: 2, eagerBreaks: 0 });
    expect(inst.capturer.stats()).toMatchObject({ liveGraphs: 2 });
    const again = await runRollout(inst, tinyRequest({ seeds: [5, 6] }));
    expect(again.captureStats).toMatchObject({ captures: 0, replays: 4 });
  });

  it('gives bit-identical trajectories captured and eager', async () => {
    const inst = await instance();
    const captured = await runRollout(inst, tinyRequest());
    const replayed = await runRollout(inst, tinyRequest());
    const eager = await runRollout(inst, tinyRequest({ graphCapture: 'off' }));
    expect(eager.captureStats).toMatchObject({ captures: 0, replays: 0, eagerSteps: 4 });
    expectSameTrajectory(captured, eager);
    expectSameTrajectory(replayed, eager);
  });

  it('reproduces an SDE rollout bit for bit from (seed, weights) on a fresh instance', async () => {
    const first = await runRollout(await instance(), tinyRequest());
    const second = await runRollout(await instance(), tinyRequest());
    expectSameTrajectory(first, second);
    const otherSeed = await runRollout(await instance(), tinyRequest({ seeds: [11, 13] }));
    const n = first.record.latents.length / 4 / 2;
    // Sample 0 shares its seed, so its whole trajectory is the same; sample 1 differs.
    for (let t = 0; t <= 3; t++) {
      const row = (g: number, r: RolloutResult): Float32Array =>
        r.record.latents.subarray((t * 2 + g) * n, (t * 2 + g + 1) * n);
      expect(sameBits(row(0, first), row(0, otherSeed))).toBe(true);
      expect(sameBits(row(1, first), row(1, otherSeed))).toBe(false);
    }
  });

  it('recomputes every stored log-prob exactly (ratio 1) from the stored trajectory', async () => {
    const inst = await instance();
    const result = await runRollout(inst, tinyRequest());
    const { config } = card;
    const dit = inst.component('dit');
    const encoder = inst.component('text_encoder');
    const encoded = await encoder.run(
      {
        tokens: {
          dtype: 'int32',
          dims: [2, config.textLen],
          data: tokenize(['', result.record.metadata.prompt], config),
        },
      },
      weightsOf('text_encoder', 1),
    );
    const row = config.textLen * config.textDim;
    const ctx = encoded['context']!.data as Float32Array;
    const context = new Float32Array(4 * row);
    for (let b = 0; b < 4; b++)
      context.set(ctx.subarray(b < 2 ? 0 : row, b < 2 ? row : 2 * row), b * row);
    const n = result.record.latents.length / 4 / 2;
    for (let i = 0; i < result.record.metadata.steps; i++) {
      const x = result.record.latents.subarray(i * 2 * n, (i + 1) * 2 * n);
      const next = result.record.latents.subarray((i + 1) * 2 * n, (i + 2) * 2 * n);
      const latent = new Float32Array(4 * n);
      latent.set(x, 0);
      latent.set(x, 2 * n);
      const out = await dit.run(
        {
          latent: {
            dtype: 'float32',
            dims: [4, ...result.record.metadata.latentDims],
            data: latent,
          },
          timestep: {
            dtype: 'float32',
            dims: [4],
            data: new Float32Array(4).fill(result.record.timesteps[i]!),
          },
          context: { dtype: 'float32', dims: [4, config.textLen, config.textDim], data: context },
        },
        weightsOf('dit', 1),
      );
      const vel = out['velocity']!.data as Float32Array;
      const v = cfgCombine(
        vel.subarray(0, 2 * n),
        vel.subarray(2 * n),
        result.record.metadata.guidanceScale,
      );
      for (let g = 0; g < 2; g++) {
        const recomputed = flowSdeStep({
          x: x.slice(g * n, (g + 1) * n),
          v: v.slice(g * n, (g + 1) * n),
          sigma: result.record.sigmas[i]!,
          sigmaNext: result.record.sigmas[i + 1]!,
          stdDevT: flowGrpoStdDev(result.record.sigmas, i, result.record.metadata.noiseLevel),
          prevSample: next.slice(g * n, (g + 1) * n),
        });
        expect(Math.exp(recomputed.logProb - result.record.logProbs![i * 2 + g]!)).toBe(1);
        expect(recomputed.logProb).toBe(result.record.logProbs![i * 2 + g]);
      }
    }
  });

  it('gives two interleaved rollouts the same bits as the two run one after the other', async () => {
    const sequential = await instance();
    const a = await runRollout(sequential, tinyRequest({ seeds: [1, 2] }));
    const b = await runRollout(sequential, tinyRequest({ seeds: [3, 4], prompt: 'a blue whale' }));
    const interleavedOn = await instance();
    const [c, d] = await Promise.all([
      runRollout(interleavedOn, tinyRequest({ seeds: [1, 2] })),
      runRollout(interleavedOn, tinyRequest({ seeds: [3, 4], prompt: 'a blue whale' })),
    ]);
    expectSameTrajectory(a, c);
    expectSameTrajectory(b, d);
    // They really shared the two graphs (encode, denoise): each captured once, then replayed.
    expect(interleavedOn.capturer.stats()).toMatchObject({ captures: 2, replays: 6 });
  });

  it('runs ODE and no-CFG requests on graphs of their own', async () => {
    const inst = await instance();
    await runRollout(inst, tinyRequest());
    const ode = await runRollout(inst, tinyRequest({ sampler: 'ode' }));
    const noCfg = await runRollout(inst, tinyRequest({ guidanceScale: 1 }));
    // RolloutFile v1: ode has no log-probs (null, not zeros).
    expect(ode.record.logProbs).toBeNull();
    expect(ode.captureStats.captures).toBe(1);
    expect(noCfg.captureStats.captures).toBe(2);
    const keys = inst.capturer
      .graphs()
      .map(
        (g) =>
          `${g.parts.shapeSig.kind}:${String(g.parts.graphKey['cfg'])}:${String(g.parts.graphKey['sampler'])}`,
      );
    expect(keys.sort()).toEqual([
      'denoise:cond:sde',
      'denoise:uncond+cond:ode',
      'denoise:uncond+cond:sde',
      'text_encode:cond:undefined',
      'text_encode:uncond+cond:undefined',
    ]);
  });

  it('lets an override replace the forward only: an eager-break, and the solver uses it', async () => {
    const inst = await instance();
    const velocities: Float32Array[] = [];
    const recorder: StepObserver = {
      name: 'recorder',
      onStep: (step, result) => {
        if (step.kind === 'denoise') velocities.push(result.tensors['velocity'] as Float32Array);
      },
    };
    const skip = createResidualSkip({ skipSteps: [2] });
    const result = await runRollout(
      inst,
      tinyRequest({ interceptors: [skip], observers: [recorder] }),
    );
    expect(skip.skipped).toEqual([2]);
    expect(result.record.metadata.interceptors).toEqual(['residual-skip']);
    expect(result.captureStats).toMatchObject({
      eagerBreaks: 1,
      eagerBreakReasons: { override: 1 },
    });
    expect(sameBits(velocities[2]!, velocities[1]!)).toBe(true);
    const n = result.record.latents.length / 4 / 2;
    const x2 = result.record.latents.subarray(2 * 2 * n, 3 * 2 * n);
    const expected = flowSdeStep({
      x: x2.slice(0, n),
      v: velocities[1]!.slice(0, n),
      sigma: result.record.sigmas[2]!,
      sigmaNext: result.record.sigmas[3]!,
      stdDevT: flowGrpoStdDev(result.record.sigmas, 2, result.record.metadata.noiseLevel),
      noise: gaussianNoise(11, 3, n),
    });
    expect(
      sameBits(result.record.latents.subarray(3 * 2 * n, 3 * 2 * n + n), expected.sample),
    ).toBe(true);
  });

  it('rejects two distribution-altering interceptors before any compute', async () => {
    const inst = await instance();
    const request = tinyRequest({
      interceptors: [
        createResidualSkip({ skipSteps: [1] }),
        createResidualSkip({ skipSteps: [2] }),
      ],
    });
    expect(await codeOf(runRollout(inst, request))).toBe('RT_INTERCEPTOR_CONFLICT');
    expect(inst.capturer.stats()).toMatchObject({ captures: 0, eagerBreaks: 0 });
    expect(inst.pinCount('dit', 1)).toBe(0);
  });

  it('fails at the first non-finite value with the NaN watch', async () => {
    const inst = await instance();
    const poisoned = weightsOf('dit', 2, 1);
    (poisoned.tensors.get('head.head.bias')!.data as Float32Array)[0] = Number.NaN;
    await inst.setWeightsVersion('dit', 2, poisoned);
    const watch = createNanWatch();
    let error: unknown;
    await runRollout(inst, tinyRequest({ observers: [watch] })).catch((e: unknown) => (error = e));
    expect(isFlowfleetError(error, 'RT_NON_FINITE')).toBe(true);
    expect((error as { details: { kind: string; step: number } }).details).toMatchObject({
      kind: 'denoise',
      step: 0,
    });
    expect(watch.checkedSteps).toBe(1);
  });

  it('round-trips a result through the rollout file exactly', async () => {
    const result = await runRollout(await instance(), tinyRequest());
    const bytes = writeRolloutFile(result.record);
    const back = readRolloutFile(bytes);
    // Any safetensors reader can open it.
    const generic = readSafetensors(bytes);
    expect(generic.tensors.get('log_probs')?.dtype).toBe('F64');
    expect(generic.tensors.get('latents')?.shape).toEqual([
      4,
      2,
      ...result.record.metadata.latentDims,
    ]);
    expect(generic.metadata['format']).toBe('flowfleet.rollout');
    expectSameRecord(result.record, back);
    expect(sameBits(back.sigmas, result.record.sigmas)).toBe(true);
    expect(sameBits(back.timesteps, result.record.timesteps)).toBe(true);
    expect(back.stepIndices).toEqual(result.record.stepIndices);
    expect(back.seeds).toEqual(result.record.seeds);
    // The file holds the record only: no timings or capture counters.
    expect(back.metadata).toEqual(result.record.metadata);
    expect(Object.keys(back.metadata)).not.toContain('captureStats');
  });
});
