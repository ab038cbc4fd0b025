import { FlowfleetError } from '@flowfleet/errors';
import type { LoopSpec } from '@flowfleet/models';
import type { ModelInstance } from './model-instance.js';
import type { RolloutRequest } from './rollout-request.js';
import type { RolloutResult } from './rollout-result.js';
import { rolloutOutputs } from './rollout-outputs.js';
import { runLoop } from './run-loop.js';
import { RuntimeLoopContext } from './runtime-loop-context.js';
import { checkInterceptors } from './step-hooks.js';

function rolloutLoopSpec(instance: ModelInstance): LoopSpec {
  const spec = instance.card.loops[0];
  if (spec === undefined) {
    throw new FlowfleetError('RT_UNKNOWN_LOOP', `card ${instance.card.id} declares no loop`, {
      details: { card: instance.card.id, loops: [] },
    });
  }
  return spec;
}

/**
 * Runs one rollout group on `instance`: resolves the request by its card's rules, pins the
 * current weight versions, drives the card's rollout loop (its first) through a
 * RuntimeLoopContext (capture/replay per the loop spec and request), and returns the trajectory
 * with everything needed to recompute it. The pins are released however it ends.
 * @throws FlowfleetError MODEL_INVALID_REQUEST, RT_UNKNOWN_LOOP, RT_INTERCEPTOR_CONFLICT (before
 *   any compute), RT_CANCELLED (at a step boundary), RT_NON_FINITE (NaN watch), RT_INSTANCE_CLOSED
 */
export async function runRollout(
  instance: ModelInstance,
  request: RolloutRequest,
): Promise<RolloutResult> {
  const started = performance.now();
  const { card } = instance;
  const spec = rolloutLoopSpec(instance);
  const resolved = card.resolveRequest(request);
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
    const out = await runLoop(spec.create(), resolved, stepInstance, context, {
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    });
    const outputs = await rolloutOutputs(card, stepInstance, resolved, out);
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
          model: card.id,
          loopId: spec.loopId,
          prompt: resolved.prompt,
          negativePrompt: resolved.negativePrompt,
          sampler: resolved.sampler,
          steps: resolved.steps,
          group: out.group,
          latentDims: [...out.latentDims],
          noiseLevel: resolved.noiseLevel,
          guidanceScale: resolved.guidanceScale,
          cfgRule: resolved.cfgRule,
          shift: resolved.shift,
          weightsVersions: { ...lease.versions },
          backend,
          platform: { device: facts.device, arch: facts.arch },
          interceptors: [...context.interceptorNames()],
          ...(outputs.video === undefined ? {} : { video: outputs.video }),
        },
        latents: outputs.latents,
        latentSteps: outputs.latentSteps,
        frameIndices: outputs.frameIndices,
        frames: outputs.frames,
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
        encodeMs: sum(steps.filter((s) => s.kind !== 'denoise').map((s) => s.ms)),
        denoiseMs: sum(denoise.map((s) => s.ms)),
        captureMs: sum(steps.map((s) => s.captureMs)),
        decodeMs: outputs.decodeMs,
        stepMs: denoise.map((s) => s.ms),
      },
    };
  } finally {
    await lease.release();
  }
}
