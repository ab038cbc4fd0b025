import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { readRolloutFile } from './read-rollout-file.js';
import type { RolloutRecord } from './rollout-record.js';
import { RolloutSummarySchema, summarizeRollout, type RolloutAttempt } from './rollout-summary.js';
import { writeRolloutFile } from './write-rollout-file.js';

const ATTEMPT: RolloutAttempt = {
  worker: 'w1',
  timings: { totalMs: 10, encodeMs: 1, denoiseMs: 8, captureMs: 0, stepMs: [4, 4] },
  captureStats: {
    captures: 1,
    replays: 1,
    eagerBreaks: 0,
    evictions: 0,
    liveGraphs: 1,
    bytesHeld: 0,
  },
};

function record(sampler: 'sde' | 'ode' = 'sde'): RolloutRecord {
  return {
    metadata: {
      model: 'm',
      loopId: 'l',
      prompt: 'p',
      negativePrompt: 'n',
      sampler,
      steps: 2,
      group: 3,
      latentDims: [1],
      noiseLevel: 0.7,
      guidanceScale: 4.5,
      shift: 3,
      weightsVersions: { dit: 2 },
      backend: { dit: 'ort-cpu' },
      platform: { device: 'cpu', arch: 'generic' },
      interceptors: [],
      cfgRule: 'above-one',
    },
    latents: new Float32Array(9),
    logProbs: sampler === 'sde' ? Float64Array.of(-1, -2, -3, -4, -5, -6) : null,
    seeds: [4, 5, 6],
    sigmas: Float64Array.of(1, 0.5, 0),
    timesteps: Float64Array.of(1000, 500),
    stepIndices: Int32Array.of(0, 1),
  };
}

describe('summarizeRollout', () => {
  it('derives the summary from the record with the file layouts and lengths', () => {
    const file = readRolloutFile(writeRolloutFile(record()));
    const summary = summarizeRollout('job-1', file, ATTEMPT);
    expect(summary.timesteps).toHaveLength(file.timesteps.length);
    expect(summary.sigmas).toEqual(Array.from(file.sigmas));
    // [T][G], step-major like log_probs [T, G].
    expect(summary.logProbs).toEqual([
      [-1, -2, -3],
      [-4, -5, -6],
    ]);
    expect(summary.logProbs?.flat()).toEqual(Array.from(file.logProbs!));
    expect(summary).toMatchObject({
      id: 'job-1',
      worker: 'w1',
      cfgRule: 'above-one',
      latentDims: [1],
    });
    expect(RolloutSummarySchema.parse(summary)).toEqual(summary);
  });

  it('gives logProbs null for ode', () => {
    expect(summarizeRollout('j', record('ode'), ATTEMPT).logProbs).toBeNull();
  });

  it('refuses a summary the schema would refuse (a non-finite log-prob, a step count off by one)', () => {
    const bad = { ...record(), logProbs: Float64Array.of(-1, -2, -Infinity, -4, -5, -6) };
    const cases: [RolloutRecord, RolloutAttempt][] = [
      [bad, ATTEMPT],
      [record(), { ...ATTEMPT, timings: { ...ATTEMPT.timings, stepMs: [1, 2, 3] } }],
    ];
    for (const [rec, attempt] of cases) {
      let caught: unknown;
      try {
        summarizeRollout('j', rec, attempt);
      } catch (error) {
        caught = error;
      }
      expect(isFlowfleetError(caught, 'FMT_ROLLOUT_INVALID')).toBe(true);
      expect((caught as { details: { reason: string } }).details.reason).toBe('summary-schema');
    }
  });

  it.each([
    ['T+1 timesteps', { timesteps: [1000, 500, 0] }, 'timesteps'],
    [
      '[G][T] log-probs',
      {
        logProbs: [
          [-1, -4],
          [-2, -5],
          [-3, -6],
        ],
      },
      'logProbs',
    ],
    [
      'zeros instead of null for ode',
      {
        sampler: 'ode',
        logProbs: [
          [0, 0, 0],
          [0, 0, 0],
        ],
      },
      'logProbs',
    ],
    ['a seed per sample missing', { seeds: [4, 5] }, 'seeds'],
  ])('the schema refuses %s', (_, patch, path) => {
    const summary = { ...summarizeRollout('j', record(), ATTEMPT), ...patch };
    const parsed = RolloutSummarySchema.safeParse(summary);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.path[0])).toContain(path);
  });
});
