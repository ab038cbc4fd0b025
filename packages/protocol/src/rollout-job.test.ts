import fc from 'fast-check';
import { NOISE_LEVEL_RANGE, SHIFT_RANGE } from '@flowfleet/numerics';
import { describe, expect, it } from 'vitest';
import { resolveLimits } from './limits.js';
import { laneForRequirements, requirementsFor } from './requirements.js';
import { RolloutJobSchema, rolloutJobFor, rolloutJobSchema } from './rollout-job.js';
import { RolloutRequestSchema } from './rollout-request.js';
import { WorkerHeartbeatSchema } from './worker-heartbeat.js';

const request = RolloutRequestSchema.parse({
  model: 'wan21-mini',
  prompt: 'a red ball',
  seeds: [1, 2, 3, 4],
  steps: 6,
  weights: { dit: { min: 3 } },
});
const CARD = { ops: ['flow_sde_step', 'cfg_combine'], componentKinds: ['dit', 'text_encoder'] };
const requirements = requirementsFor(request, CARD);
const JOB = {
  id: `${laneForRequirements(requirements)}.0b7c7c1e-5d1a-4a53-9d42-3f0c5b2b9a10`,
  lane: laneForRequirements(requirements),
  request,
  weights: { dit: { min: 3 } },
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

  it('carries the weight requirement as sent and as a worker enforces it', () => {
    expect(RolloutJobSchema.parse(JOB).request.weights).toEqual({ dit: { min: 3 } });
    expect(RolloutJobSchema.parse(JOB).weights).toEqual({ dit: { min: 3 } });
  });

  it('refuses a job whose enforced weights still hold a maxStaleness (the coordinator resolves it)', () => {
    const unresolved = { ...JOB, weights: { dit: { maxStaleness: 1 } } };
    expect(paths(RolloutJobSchema.safeParse(unresolved))).toEqual(['weights.dit']);
    const stale = RolloutRequestSchema.parse({ ...request, weights: { dit: { maxStaleness: 1 } } });
    expect(() => rolloutJobFor(stale, CARD)).toThrow(/maxStaleness/);
    expect(rolloutJobFor(stale, CARD, { weights: { dit: { min: 4 } } }).weights).toEqual({
      dit: { min: 4 },
    });
  });

  it('rejects a lane that is not the hash of the requirements, and an id that names another lane', () => {
    const other = laneForRequirements({ ...requirements, devices: ['cpu'] });
    const moved = { ...JOB, lane: other, id: JOB.id.replace(JOB.lane, other) };
    expect(paths(RolloutJobSchema.safeParse(moved))).toEqual(['lane']);
    expect(paths(RolloutJobSchema.safeParse({ ...JOB, lane: other }))).toEqual(['id', 'lane']);
    const plainUuid = { ...JOB, id: '0b7c7c1e-5d1a-4a53-9d42-3f0c5b2b9a10' };
    expect(paths(RolloutJobSchema.safeParse(plainUuid))).toEqual(['id']);
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
          id: JOB.id.replace(JOB.lane, laneForRequirements(foreign)),
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

/** Valid request bodies across the whole space the schema accepts (defaults left to it). */
const requestBodyArb = fc.record(
  {
    model: fc.constantFrom('wan21-mini', 'wan21-1.3b', 'm.x-1'),
    prompt: fc.string({ minLength: 1, maxLength: 40 }),
    seeds: fc.uniqueArray(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), {
      minLength: 1,
      maxLength: 8,
    }),
    steps: fc.integer({ min: 1, max: 100 }),
    sampler: fc.constantFrom('sde', 'ode'),
    guidanceScale: fc.double({ min: 0, max: 100, noNaN: true }),
    noiseLevel: fc.double({ ...NOISE_LEVEL_RANGE, noNaN: true }),
    shift: fc.double({ ...SHIFT_RANGE, noNaN: true }),
    shape: fc.record({
      frames: fc.integer({ min: 1, max: 8 }),
      height: fc.integer({ min: 1, max: 32 }),
      width: fc.integer({ min: 1, max: 32 }),
    }),
    weights: fc.dictionary(
      fc.constantFrom('dit', 'text_encoder'),
      fc.oneof(
        fc.record({ min: fc.integer({ min: 1, max: 1_000 }) }),
        fc.record({ exact: fc.integer({ min: 1, max: 1_000 }) }),
      ),
    ),
    constraints: fc.record(
      {
        devices: fc.uniqueArray(fc.constantFrom('cpu', 'cuda'), { minLength: 1 }),
        minArch: fc.record(
          { cpu: fc.constantFrom('x86-64-v2', 'x86-64-v3'), cuda: fc.constantFrom('sm80', 'sm90') },
          { requiredKeys: [] },
        ),
      },
      { requiredKeys: [] },
    ),
    waitForCapacity: fc.boolean(),
  },
  { requiredKeys: ['model', 'prompt', 'seeds'] },
);

/** What a card may derive: any op ids and component kinds (the schema's atoms). */
const capabilitiesArb = fc.record({
  ops: fc.array(fc.constantFrom('flow_sde_step', 'flow_match_step', 'cfg_combine', 'rope_apply'), {
    minLength: 1,
  }),
  componentKinds: fc.array(fc.constantFrom('dit', 'text_encoder', 'vae', 'velocity_mlp')),
});

describe('rolloutJobFor', () => {
  it('builds a payload that always passes the schema workers check on dequeue', () => {
    fc.assert(
      fc.property(requestBodyArb, capabilitiesArb, (body, capabilities) => {
        const request = RolloutRequestSchema.parse(body);
        const job = rolloutJobFor(request, capabilities);
        expect(RolloutJobSchema.parse(JSON.parse(JSON.stringify(job)))).toEqual(job);
        expect(job.requirements).toEqual(requirementsFor(request, capabilities));
      }),
      { numRuns: 300 },
    );
  });
});
