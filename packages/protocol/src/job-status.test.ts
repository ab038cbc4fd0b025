import { describe, expect, it } from 'vitest';
import { JobStatusSchema } from './job-status.js';
import { LaneSpecSchema } from './lane-spec.js';
import { laneForRequirements, type Requirements } from './requirements.js';
import { RolloutSummarySchema } from './rollout-summary.js';

const SUMMARY = {
  id: 'job-1',
  model: 'wan21-mini',
  prompt: 'a red ball',
  seeds: [1, 2],
  steps: 2,
  sampler: 'sde',
  guidanceScale: 4.5,
  noiseLevel: 0.7,
  shift: 3,
  shape: { frames: 4, height: 16, width: 16 },
  sigmas: [1, 0.6, 0],
  timesteps: [1000, 600, 0],
  logProbs: [
    [-1.5, -1.4],
    [-1.6, -1.3],
  ],
  weights: { dit: 3, text_encoder: 0 },
  worker: 'w-1',
  platform: { device: 'cpu', arch: 'x86-64-v3', features: [] },
  backend: 'cpu',
  timings: { totalMs: 12.5, perStepMs: [6, 6.5] },
};

function paths(result: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }) {
  expect(result.success).toBe(false);
  return result.error?.issues.map((issue) => issue.path.join('.')) ?? [];
}

describe('RolloutSummarySchema', () => {
  it('accepts a consistent summary, with or without capture stats', () => {
    expect(RolloutSummarySchema.parse(SUMMARY)).toEqual(SUMMARY);
    const stats = {
      captures: 1,
      replays: 1,
      eagerBreaks: 0,
      evictions: 0,
      liveGraphs: 1,
      bytesHeld: 64,
    };
    expect(RolloutSummarySchema.parse({ ...SUMMARY, captureStats: stats }).captureStats).toEqual(
      stats,
    );
  });

  it('accepts an ode summary with empty log-prob rows', () => {
    expect(
      RolloutSummarySchema.safeParse({ ...SUMMARY, sampler: 'ode', logProbs: [[], []] }).success,
    ).toBe(true);
  });

  it.each([
    ['sigmas of the wrong length', { sigmas: [1, 0] }, 'sigmas'],
    ['timesteps of the wrong length', { timesteps: [1000, 0] }, 'timesteps'],
    ['a log-prob row per seed missing', { logProbs: [[-1, -1]] }, 'logProbs'],
    ['a short log-prob row', { logProbs: [[-1, -1], [-1]] }, 'logProbs.1'],
    [
      'per-step timings of the wrong length',
      { timings: { totalMs: 1, perStepMs: [1] } },
      'timings.perStepMs',
    ],
    [
      'a non-numeric log-prob',
      {
        logProbs: [
          [-1, 'x'],
          [-1, -1],
        ],
      },
      'logProbs.0.1',
    ],
  ])('rejects %s', (_name, patch, path) => {
    expect(paths(RolloutSummarySchema.safeParse({ ...SUMMARY, ...patch }))).toContain(path);
  });
});

const REQS: Requirements = {
  model: 'wan21-mini',
  ops: ['flow_sde_step'],
  components: ['dit', 'text_encoder'],
  devices: ['cpu'],
  minArch: {},
  dtype: 'float32',
};
const LANE = laneForRequirements(REQS);

describe('JobStatusSchema', () => {
  const base = {
    id: 'job-1',
    lane: LANE,
    status: 'queued',
    progress: { step: 0, steps: 2 },
    attempts: 0,
    createdAt: '2026-11-30T05:35:00.000Z',
  };

  it('accepts queued, active, completed and failed jobs', () => {
    expect(JobStatusSchema.parse(base)).toEqual(base);
    expect(
      JobStatusSchema.safeParse({
        ...base,
        status: 'active',
        progress: { step: 1, steps: 2 },
        worker: 'w-1',
      }).success,
    ).toBe(true);
    const done = {
      ...base,
      status: 'completed',
      progress: { step: 2, steps: 2 },
      summary: SUMMARY,
    };
    expect(JobStatusSchema.parse(done).summary?.logProbs).toEqual(SUMMARY.logProbs);
    const failed = {
      ...base,
      status: 'failed',
      error: { code: 'RT_NON_FINITE', message: 'nan', details: {} },
    };
    expect(JobStatusSchema.safeParse(failed).success).toBe(true);
  });

  it.each([
    ['an unknown status', { status: 'held' }, 'status'],
    ['progress beyond steps', { progress: { step: 3, steps: 2 } }, 'progress.step'],
    ['a lane with ":"', { lane: 'lane:abc' }, 'lane'],
    ['a completed job without summary', { status: 'completed' }, 'summary'],
    ['a failed job without error', { status: 'failed' }, 'error'],
    [
      'a malformed error code',
      { status: 'failed', error: { code: 'oops', message: 'x', details: {} } },
      'error.code',
    ],
  ])('rejects %s', (_name, patch, path) => {
    expect(paths(JobStatusSchema.safeParse({ ...base, ...patch }))).toContain(path);
  });
});

describe('LaneSpecSchema', () => {
  it('accepts a lane named by the hash of its requirements', () => {
    const spec = { lane: LANE, requirements: REQS, createdAt: '2026-11-30T05:35:00.000Z' };
    expect(LaneSpecSchema.parse(spec)).toEqual(spec);
  });

  it('rejects a lane whose name does not match its requirements', () => {
    const spec = {
      lane: LANE,
      requirements: { ...REQS, devices: ['cuda'] },
      createdAt: '2026-11-30T05:35:00.000Z',
    };
    expect(paths(LaneSpecSchema.safeParse(spec))).toEqual(['lane']);
  });
});
