// The parity oracle across devices (DESIGN.md §2): full rollouts on onnxruntime's WebGPU provider
// (the adapter detection finds here — lavapipe, a software adapter, in CI) against the same
// rollouts on its CPU provider, within the tolerance stated next to the ort-webgpu cells;
// on the same adapter a rollout repeats bit for bit, and its captured form (weights baked in)
// replays the eager one bit for bit, before and after a weight sync evicts it.
import {
  declareOrtCells,
  ORT_WEBGPU_PARITY_TOLERANCE,
  ortCellWiring,
  OrtSessions,
  registerCpuBackend,
} from '@flowfleet/backends';
import {
  ComputePool,
  createPlatform,
  detectPlatform,
  DEVICE_ENV,
  within,
  type PlatformFacts,
} from '@flowfleet/platform';
import { createComponentRegistry, createKernelRegistry } from '@flowfleet/registry';
import { ModelInstance, runRollout, type RolloutRequest } from '@flowfleet/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { card, sameBits, weightsOf } from '../runtime/runtime-fixtures.js';

let pool: ComputePool;
let webgpu: ModelInstance;
let cpu: ModelInstance;
let facts: PlatformFacts;

async function instanceOn(deviceFacts: PlatformFacts, sessions: OrtSessions) {
  const components = createComponentRegistry();
  const kernels = createKernelRegistry();
  registerCpuBackend({ kernels });
  declareOrtCells({
    registries: { components },
    kinds: card.components.map((c) => c.kind),
    device: deviceFacts.device,
    ...ortCellWiring(sessions),
  });
  return ModelInstance.create({
    card,
    platform: createPlatform({ facts: deviceFacts, kernels, components, pool }),
    weights: {
      dit: { version: 1, weights: weightsOf('dit', 1) },
      text_encoder: { version: 1, weights: weightsOf('text_encoder', 1) },
    },
  });
}

beforeAll(async () => {
  // Real detection, as a worker started with FLOWFLEET_DEVICE=webgpu does it.
  facts = detectPlatform({ env: { ...process.env, [DEVICE_ENV]: 'webgpu' } });
  pool = await ComputePool.create({ threads: 1 });
  const sessions = await OrtSessions.attach(pool, { intraOpThreads: 1 });
  await sessions.probeAll();
  webgpu = await instanceOn(facts, sessions);
  cpu = await instanceOn(
    detectPlatform({ env: { ...process.env, [DEVICE_ENV]: 'cpu' } }),
    sessions,
  );
}, 60_000);

afterAll(async () => {
  await webgpu?.close();
  await cpu?.close();
  await pool?.close();
});

const REQUEST: RolloutRequest = {
  prompt: 'a red ball bouncing on a wooden floor',
  seeds: [3, 4],
  steps: 8,
  sampler: 'sde',
  guidanceScale: 4.5,
  shape: { frames: 2, height: 8, width: 8 },
};

describe('webgpu against cpu over full 8-step SDE rollouts (CFG on)', () => {
  it('stays within the stated tolerance on final latents and log-probs', async () => {
    console.info(`webgpu adapter: ${facts.arch} ${facts.features.join(' | ')}`);
    const [a, b] = [await runRollout(webgpu, REQUEST), await runRollout(cpu, REQUEST)];
    expect(a.record.metadata.backend.dit).toBe('ort-webgpu');
    expect(a.record.metadata.backend.text_encoder).toBe('ort-webgpu');
    expect(b.record.metadata.backend.dit).toBe('ort-cpu');
    expect(a.record.metadata.platform).toEqual({ device: 'webgpu', arch: facts.arch });
    const latents = within(a.record.latents, b.record.latents, ORT_WEBGPU_PARITY_TOLERANCE);
    const logProbs = within(
      a.record.logProbs ?? new Float64Array(0),
      b.record.logProbs ?? new Float64Array(1),
      ORT_WEBGPU_PARITY_TOLERANCE,
    );
    console.info(
      `webgpu vs cpu: latents maxAbs=${latents.maxAbs.toExponential(2)} maxRel=${latents.maxRel.toExponential(2)}; ` +
        `logProbs maxAbs=${logProbs.maxAbs.toExponential(2)} maxRel=${logProbs.maxRel.toExponential(2)} ` +
        `(tolerance rtol ${ORT_WEBGPU_PARITY_TOLERANCE.rtol}, atol ${ORT_WEBGPU_PARITY_TOLERANCE.atol})`,
    );
    expect(latents.passed).toBe(true);
    expect(logProbs.passed).toBe(true);
    // Not vacuous: the devices really computed separately (their last bits differ).
    expect(sameBits(a.record.latents, b.record.latents)).toBe(false);
  }, 120_000);

  it('repeats bit for bit on the same adapter, and captured replays ≡ eager, across a weight sync', async () => {
    const request: RolloutRequest = { ...REQUEST, steps: 4 };
    const first = await runRollout(webgpu, request);
    const retried = await runRollout(webgpu, request);
    expect(sameBits(retried.record.latents, first.record.latents)).toBe(true);
    expect(sameBits(retried.record.logProbs, first.record.logProbs)).toBe(true);
    const eager = await runRollout(webgpu, { ...request, graphCapture: 'off' });
    expect(sameBits(eager.record.latents, first.record.latents)).toBe(true);
    expect(sameBits(eager.record.logProbs, first.record.logProbs)).toBe(true);
    expect(webgpu.capturer.stats().replays).toBeGreaterThan(0);

    const evictionsBefore = webgpu.capturer.stats().evictions;
    await webgpu.setWeightsVersion('dit', 2, weightsOf('dit', 2));
    expect(webgpu.capturer.stats().evictions).toBeGreaterThan(evictionsBefore);
    const capturedV2 = await runRollout(webgpu, request);
    const eagerV2 = await runRollout(webgpu, { ...request, graphCapture: 'off' });
    expect(capturedV2.record.metadata.weightsVersions).toMatchObject({ dit: 2 });
    expect(sameBits(capturedV2.record.latents, eagerV2.record.latents)).toBe(true);
    expect(sameBits(capturedV2.record.latents, first.record.latents)).toBe(false);
  }, 180_000);
});
