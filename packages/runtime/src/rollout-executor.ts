import { FlowfleetError } from '@flowfleet/errors';
import type { LoopSpec } from '@flowfleet/models';
import type { ModelInstance } from './model-instance.js';
import type { RolloutResult } from './rollout-result.js';
import { runLoop } from './run-loop.js';
import { RuntimeLoopContext } from './runtime-loop-context.js';
import { checkInterceptors } from './step-hooks.js';
import { createWan21DenoiseLoop, WAN21_DENOISE_LOOP_ID } from './wan21/denoise-loop.js';
import { resolveRolloutRequest, type RolloutRequest } from './wan21/rollout-request.js';

function denoiseLoopSpec(instance: ModelInstance): LoopSpec {
  const spec = instance.card.loops.find((loop) => loop.loopId === WAN21_DENOISE_LOOP_ID);
  if (spec === undefined) {
    const known = instance.card.loops.map((loop) => loop.loopId);
    throw new FlowfleetError(
      'RT_UNKNOWN_LOOP',
      `card ${instance.card.id} has no loop the runtime implements (${known.join(', ') || 'none'})`,
      { details: { card: instance.card.id, loops: known, implemented: [WAN21_DENOISE_LOOP_ID] } },
    );
  }
  return spec;
}

/**
 * Runs one rollout group on `instance`: pins the current weight versions, drives the denoise loop
 * through a RuntimeLoopContext (capture/replay per the loop spec and request), and returns the
 * trajectory with everything needed to recompute it. The pins are released however it ends.
 * @throws FlowfleetError RT_INVALID_REQUEST, RT_UNKNOWN_LOOP, RT_INTERCEPTOR_CONFLICT (before any
 *   compute), RT_CANCELLED (at a step boundary), RT_NON_FINITE (NaN watch), RT_INSTANCE_CLOSED
 */
export async function runRollout(
  instance: ModelInstance,
  request: RolloutRequest,
): Promise<RolloutResult> {
  const started = performance.now();
  const spec = denoiseLoopSpec(instance);
  const resolved = resolveRolloutRequest(instance.card, request);
  const interceptors = request.interceptors ?? [];
  checkInterceptors(interceptors);
  const lease = instance.acquireWeights();
  try {
    const stepInstance = instance.stepInstance(lease);
    const context = new RuntimeLoopContext({
      loopId: spec.loopId,
      capturer: instance.capturer,
      instance: stepInstance,
      graphCapture: request.graphCapture === 'off' ? 'eager' : spec.graphCapture,
      interceptors,
      ...(request.observers === undefined ? {} : { observers: request.observers }),
    });
    const loop = createWan21DenoiseLoop(instance.card);
    const out = await runLoop(loop, resolved, stepInstance, context, {
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    });
    const steps = context.steps();
    const denoise = steps.filter((s) => s.kind === 'denoise');
    const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);
    const { facts } = instance.platform;
    const backend = Object.fromEntries(
      instance.componentIds.map((id) => [id, instance.componentSource(id)]),
    );
    return {
      record: {
        metadata: {
          model: instance.card.id,
          loopId: spec.loopId,
          prompt: resolved.prompt,
          negativePrompt: resolved.negativePrompt,
          sampler: resolved.sampler,
          steps: resolved.steps,
          group: out.geometry.group,
          latentDims: [...out.geometry.latentDims],
          noiseLevel: resolved.noiseLevel,
          guidanceScale: resolved.guidanceScale,
          shift: resolved.shift,
          weightsVersions: { ...lease.versions },
          backend,
          platform: { device: facts.device, arch: facts.arch },
          interceptors: [...context.interceptorNames()],
        },
        latents: out.latents,
        // ode has no log-probs (RolloutFile v1: no tensor, not zeros).
        logProbs: resolved.sampler === 'sde' ? out.logProbs : null,
        seeds: resolved.seeds,
        sigmas: out.sigmas,
        timesteps: out.timesteps,
        stepIndices: out.stepIndices,
      },
      captureStats: context.stats(),
      timings: {
        totalMs: performance.now() - started,
        encodeMs: sum(steps.filter((s) => s.kind === 'encode').map((s) => s.ms)),
        denoiseMs: sum(denoise.map((s) => s.ms)),
        captureMs: sum(steps.map((s) => s.captureMs)),
        stepMs: denoise.map((s) => s.ms),
      },
    };
  } finally {
    await lease.release();
  }
}
