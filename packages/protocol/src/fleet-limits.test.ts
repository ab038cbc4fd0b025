import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { FleetLimits } from './fleet-limits.js';
import { DEFAULT_LIMITS, resolveLimits } from './limits.js';
import { rolloutJobFor } from './rollout-job.js';
import { rolloutRequestSchema } from './rollout-request.js';

const WIDE = resolveLimits({ maxSteps: 160 });
/** A 130-step job, as a coordinator enforcing maxSteps 160 enqueues it (JSON round trip). */
const JOB: unknown = JSON.parse(
  JSON.stringify(
    rolloutJobFor(
      rolloutRequestSchema(WIDE).parse({
        model: 'wan21-mini',
        prompt: 'p',
        seeds: [1],
        steps: 130,
      }),
      { ops: ['flow_sde_step', 'cfg_combine'], componentKinds: ['dit', 'text_encoder'] },
    ),
  ),
);

/** A limits hash whose content the test changes, counting reads. */
function hash(initial: Record<string, string>) {
  const state = { fields: initial, reads: 0, fail: false };
  const read = async (): Promise<Record<string, string>> => {
    state.reads += 1;
    if (state.fail) throw new Error('redis down');
    return { ...state.fields };
  };
  return { state, read };
}

describe('FleetLimits', () => {
  it('uses the defaults while nothing is published', async () => {
    const { read } = hash({});
    expect(await new FleetLimits({ read }).current()).toEqual(DEFAULT_LIMITS);
  });

  it('reads once and keeps the limits while jobs pass them', async () => {
    const { state, read } = hash({ maxSteps: '160' });
    const limits = new FleetLimits({ read });
    await limits.parseJob(JOB);
    await limits.parseJob(JOB);
    expect(state.reads).toBe(1);
  });

  it('reads again when a job fails the kept copy: a worker that started first sees the wider limits', async () => {
    const { state, read } = hash({});
    const limits = new FleetLimits({ read });
    expect((await limits.current()).maxSteps).toBe(100);
    state.fields = { maxSteps: '160' };
    const job = await limits.parseJob(JOB);
    expect(job.request.steps).toBe(130);
    expect(state.reads).toBe(2);
    expect((await limits.current()).maxSteps).toBe(160);
  });

  it('refuses a job outside even the fresh limits with PROTO_INVALID_JOB', async () => {
    const { read } = hash({ maxSteps: '120' });
    const error = await new FleetLimits({ read }).parseJob(JOB).catch((e: unknown) => e);
    expect(isFlowfleetError(error, 'PROTO_INVALID_JOB')).toBe(true);
    await expect(new FleetLimits({ read }).parseJob({ id: 'x' })).rejects.toMatchObject({
      code: 'PROTO_INVALID_JOB',
    });
  });

  it('does not keep a failed read', async () => {
    const { state, read } = hash({ maxSteps: '160' });
    const limits = new FleetLimits({ read });
    state.fail = true;
    await expect(limits.current()).rejects.toThrow('redis down');
    state.fail = false;
    expect((await limits.current()).maxSteps).toBe(160);
  });

  it('reports unreadable fields and uses their defaults', async () => {
    const { read } = hash({ maxSteps: 'lots', maxGroupSize: '8' });
    const reported: string[] = [];
    const limits = new FleetLimits({ read, onUnreadable: (fields) => reported.push(...fields) });
    expect(await limits.current()).toEqual({ ...DEFAULT_LIMITS, maxGroupSize: 8 });
    expect(reported).toEqual(['maxSteps']);
  });
});
