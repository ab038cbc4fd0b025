// Backend parity over a whole denoise run (DESIGN.md §2, parity ladder): the ort-cpu components
// against the TS reference (the oracle) for an 8-step rollout, ODE and SDE, CFG on and off. The
// tolerance is the one stated next to the ort cells' registration (ORT_PARITY_TOLERANCE).
import {
  declareOrtCells,
  ORT_PARITY_TOLERANCE,
  ortCellWiring,
  OrtSessions,
} from '@flowfleet/backends';
import { ComputePool, within } from '@flowfleet/platform';
import { createComponentRegistry } from '@flowfleet/registry';
import { ModelInstance, runRollout, type RolloutRequest } from '@flowfleet/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { card, cpuPlatform, referenceInstance, weightsOf } from '../runtime/runtime-fixtures.js';

let pool: ComputePool;
let ort: ModelInstance;
let reference: ModelInstance;

beforeAll(async () => {
  pool = await ComputePool.create({ threads: 1 });
  const sessions = await OrtSessions.attach(pool, { intraOpThreads: 1 });
  const components = createComponentRegistry();
  declareOrtCells({
    registries: { components },
    kinds: card.components.map((c) => c.kind),
    ...ortCellWiring(sessions),
  });
  ort = await ModelInstance.create({
    card,
    platform: cpuPlatform(pool, components),
    weights: {
      dit: { version: 1, weights: weightsOf('dit', 1) },
      text_encoder: { version: 1, weights: weightsOf('text_encoder', 1) },
    },
  });
  reference = await referenceInstance(pool);
});

afterAll(async () => {
  await ort?.close();
  await reference?.close();
  await pool?.close();
});

const CASES: readonly { sampler: 'ode' | 'sde'; guidanceScale: number }[] = [
  { sampler: 'ode', guidanceScale: 1 },
  { sampler: 'ode', guidanceScale: 4.5 },
  { sampler: 'sde', guidanceScale: 1 },
  { sampler: 'sde', guidanceScale: 4.5 },
];

describe('ort-cpu vs the TS reference over a full 8-step denoise', () => {
  it.each(CASES)('$sampler, guidance $guidanceScale', async ({ sampler, guidanceScale }) => {
    const request: RolloutRequest = {
      prompt: 'a red ball bouncing on a wooden floor',
      seeds: [3, 4],
      steps: 8,
      sampler,
      guidanceScale,
      shape: { frames: 2, height: 8, width: 8 },
    };
    const [a, b] = await Promise.all([runRollout(ort, request), runRollout(reference, request)]);
    expect(a.record.metadata.backend.dit).toBe('ort-cpu');
    expect(b.record.metadata.backend.dit).toBe('cpu-reference');

    const latents = within(a.record.latents, b.record.latents, ORT_PARITY_TOLERANCE);
    // ode has no log-probs on either backend (null, not zeros).
    expect([a.record.logProbs === null, b.record.logProbs === null]).toEqual([
      sampler === 'ode',
      sampler === 'ode',
    ]);
    const none = new Float64Array(0);
    const logProbs = within(
      a.record.logProbs ?? none,
      b.record.logProbs ?? none,
      ORT_PARITY_TOLERANCE,
    );
    console.log(
      `${sampler} cfg=${guidanceScale}: latents maxAbs=${latents.maxAbs.toExponential(2)} ` +
        `maxRel=${latents.maxRel.toExponential(2)}; logProbs maxAbs=${logProbs.maxAbs.toExponential(2)} ` +
        `maxRel=${logProbs.maxRel.toExponential(2)}`,
    );
    expect(latents.passed, JSON.stringify(latents)).toBe(true);
    expect(logProbs.passed, JSON.stringify(logProbs)).toBe(true);
    // The two backends must really differ in how they compute (float32 vs float64 accumulation):
    // identical bits would mean the comparison ran one backend twice.
    expect(latents.maxAbs).toBeGreaterThan(0);
  });
});
