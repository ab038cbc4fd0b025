import { describe, expect, it } from 'vitest';
import { resolveLimits } from './limits.js';
import { laneForRequirements, requirementsFor } from './requirements.js';
import { RolloutJobSchema, rolloutJobSchema } from './rollout-job.js';
import { RolloutRequestSchema } from './rollout-request.js';
import { WorkerHeartbeatSchema } from './worker-heartbeat.js';

const request = RolloutRequestSchema.parse({
  model: 'wan21-mini',
  prompt: 'a red ball',
  seeds: [1, 2, 3, 4],
  steps: 6,
  weights: { dit: { min: 3 } },
});
const requirements = requirementsFor(request);
const JOB = {
  id: '0b7c7c1e-5d1a-4a53-9d42-3f0c5b2b9a10',
  lane: laneForRequirements(requirements),
  request,
  requirements,
  enqueuedAt: '2026-11-30T05:35:00.000Z',
};

function paths(result: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }) {
  expect(result.success).toBe(false);
  return result.error?.issues.map((issue) => issue.path.join('.')) ?? [];
}

describe('RolloutJobSchema', () => {
  it('round-trips a job through JSON (as BullMQ stores it) unchanged', () => {
    expect(RolloutJobSchema.parse(JSON.parse(JSON.stringify(JOB)))).toEqual(JOB);
  });

  it('carries the weight requirement in the request', () => {
    expect(RolloutJobSchema.parse(JOB).request.weights).toEqual({ dit: { min: 3 } });
  });

  it('rejects a lane that is not the hash of the requirements', () => {
    const other = laneForRequirements({ ...requirements, devices: ['cpu'] });
    expect(paths(RolloutJobSchema.safeParse({ ...JOB, lane: other }))).toEqual(['lane']);
  });

  it('rejects a tampered request and requirements for another model', () => {
    const tampered = { ...JOB, request: { ...request, steps: 0 } };
    expect(paths(RolloutJobSchema.safeParse(tampered))).toEqual(['request.steps']);
    const foreign = { ...requirements, model: 'other' };
    expect(
      paths(
        RolloutJobSchema.safeParse({
          ...JOB,
          requirements: foreign,
          lane: laneForRequirements(foreign),
        }),
      ),
    ).toEqual(['requirements.model']);
  });

  it('re-checks the request against the limits it is given', () => {
    expect(paths(rolloutJobSchema(resolveLimits({ maxSteps: 4 })).safeParse(JOB))).toEqual([
      'request.steps',
    ]);
  });
});

describe('WorkerHeartbeatSchema', () => {
  it('accepts a beat and defaults lanes', () => {
    expect(
      WorkerHeartbeatSchema.parse({ workerId: 'w-1', at: '2026-11-30T05:35:00Z', activeJobs: 1 }),
    ).toEqual({ workerId: 'w-1', at: '2026-11-30T05:35:00Z', activeJobs: 1, lanes: [] });
  });

  it('rejects negative activity and malformed lanes', () => {
    const beat = { workerId: 'w-1', at: '2026-11-30T05:35:00Z', activeJobs: -1, lanes: ['x'] };
    expect(paths(WorkerHeartbeatSchema.safeParse(beat))).toEqual(['activeJobs', 'lanes.0']);
  });
});
