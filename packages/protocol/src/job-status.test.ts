import { describe, expect, it } from 'vitest';
import { JobStatusSchema } from './job-status.js';
import { LaneSpecSchema } from './lane-spec.js';
import { laneForRequirements, type Requirements } from './requirements.js';

/** A completed job's summary (RolloutFile v1's schema, owned by formats). */
const SUMMARY = {
  id: 'job-1',
  model: 'wan21-mini',
  loopId: 'wan21.denoise',
  prompt: 'a red ball',
  negativePrompt: '',
  sampler: 'sde',
  steps: 2,
  group: 2,
  latentDims: [4, 4, 16, 16],
  noiseLevel: 0.7,
  guidanceScale: 4.5,
  shift: 3,
  weightsVersions: { dit: 3, text_encoder: 0 },
  backend: { dit: 'cpu-reference', text_encoder: 'cpu-reference' },
  platform: { device: 'cpu', arch: 'x86-64-v3' },
  interceptors: [],
  seeds: [1, 2],
  sigmas: [1, 0.6, 0],
  timesteps: [1000, 600],
  stepIndices: [0, 1],
  logProbs: [
    [-1.5, -1.4],
    [-1.6, -1.3],
  ],
  worker: 'w-1',
  timings: { totalMs: 12.5, encodeMs: 0.5, denoiseMs: 12, captureMs: 0, stepMs: [6, 6] },
  captureStats: {
    captures: 1,
    replays: 1,
    eagerBreaks: 0,
    evictions: 0,
    liveGraphs: 1,
    bytesHeld: 64,
  },
};

function paths(result: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }) {
  expect(result.success).toBe(false);
  return result.error?.issues.map((issue) => issue.path.join('.')) ?? [];
}

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

  it("checks a completed job's summary with RolloutFile v1's schema", () => {
    const done = { ...base, status: 'completed', progress: { step: 2, steps: 2 } };
    const stale = { ...SUMMARY, timesteps: [1000, 600, 0] };
    expect(paths(JobStatusSchema.safeParse({ ...done, summary: stale }))).toContain(
      'summary.timesteps',
    );
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
