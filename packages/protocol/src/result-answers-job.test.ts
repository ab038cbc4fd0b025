import { summarizeRollout, type RolloutSummary } from '@flowfleet/formats';
import { describe, expect, it } from 'vitest';
import { resultMismatches } from './result-answers-job.js';
import { rolloutJobFor } from './rollout-job.js';
import { RolloutRequestSchema } from './rollout-request.js';

const CARD = { ops: ['flow_sde_step', 'cfg_combine'], componentKinds: ['dit', 'text_encoder'] };
// As the coordinator stores it: the card's resolved request, every sampling field stated.
const RESOLVED = {
  negativePrompt: '',
  steps: 3,
  sampler: 'sde',
  guidanceScale: 4.5,
  cfgRule: 'unless-one',
  noiseLevel: 0.7,
  shift: 3,
} as const;
const request = RolloutRequestSchema.parse({
  model: 'wan21-mini',
  prompt: 'a red ball',
  seeds: [11, 12, 13, 14],
  ...RESOLVED,
  shape: { frames: 1, height: 2, width: 2 },
});
const job = rolloutJobFor(request, CARD, { weights: { dit: { min: 3 } } });

/** The summary a worker that ran `job` honestly uploads. */
function honest(): RolloutSummary {
  const t = RESOLVED.steps;
  const g = request.seeds.length;
  const sigmas = Float64Array.from({ length: t + 1 }, (_, i) => 1 - i / t);
  return summarizeRollout(
    job.id,
    {
      metadata: {
        model: request.model,
        loopId: 'wan21.denoise',
        prompt: request.prompt,
        negativePrompt: RESOLVED.negativePrompt,
        sampler: RESOLVED.sampler,
        steps: t,
        group: g,
        latentDims: [4, 1, 2, 2],
        noiseLevel: RESOLVED.noiseLevel,
        guidanceScale: RESOLVED.guidanceScale,
        cfgRule: RESOLVED.cfgRule,
        shift: RESOLVED.shift,
        weightsVersions: { dit: 3, text_encoder: 0 },
        backend: { dit: 'cpu-reference' },
        platform: { device: 'cpu', arch: 'generic' },
        interceptors: [],
      },
      latents: new Float32Array((t + 1) * g * 16),
      logProbs: new Float64Array(t * g),
      seeds: request.seeds,
      sigmas,
      timesteps: sigmas.slice(0, t).map((s) => 1000 * s),
      stepIndices: Int32Array.from({ length: t }, (_, i) => i),
    },
    {
      worker: 'w',
      timings: { totalMs: 1, encodeMs: 0, denoiseMs: 1, captureMs: 0, stepMs: [0, 0, 1] },
      captureStats: {
        captures: 0,
        replays: 0,
        eagerBreaks: 0,
        evictions: 0,
        liveGraphs: 0,
        bytesHeld: 0,
      },
    },
  );
}

describe('resultMismatches', () => {
  it('finds nothing in the summary of the job it answers', () => {
    expect(resultMismatches(job, honest())).toEqual([]);
  });

  it.each([
    ['id', { id: 'lane-0000000000000000.other' }],
    ['model', { model: 'wan21-t2v-1.3b' }],
    ['prompt', { prompt: 'a red ball ' }],
    ['negativePrompt', { negativePrompt: 'blurry' }],
    ['seeds', { seeds: [11, 12, 14, 13] }],
    ['steps', { steps: 4 }],
    ['sampler', { sampler: 'ode' }],
    ['guidanceScale', { guidanceScale: 1 }],
    ['cfgRule', { cfgRule: 'above-one' }],
    ['noiseLevel', { noiseLevel: 0.5 }],
    ['shift', { shift: null }],
    ['weights.dit', { weightsVersions: { dit: 2, text_encoder: 0 } }],
  ] as const)('names %s when it differs', (field, change) => {
    const mismatches = resultMismatches(job, { ...honest(), ...change } as RolloutSummary);
    expect(mismatches.map((m) => m.field)).toEqual([field]);
  });

  it('reads a summary without cfgRule as the only rule there was (unless-one)', () => {
    const older: Partial<RolloutSummary> = honest();
    delete older.cfgRule;
    expect(resultMismatches(job, older as RolloutSummary)).toEqual([]);
  });
});
