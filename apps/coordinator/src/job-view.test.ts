import { FlowfleetError } from '@flowfleet/errors';
import { JobViewSchema, rolloutJobFor, RolloutRequestSchema } from '@flowfleet/protocol';
import { describe, expect, it } from 'vitest';
import { jobStateOf, jobViewOf, type JobRecord } from './job-view.js';

const payload = rolloutJobFor(
  RolloutRequestSchema.parse({ model: 'wan21-mini', prompt: 'p', seeds: [1], steps: 8 }),
  { ops: ['flow_sde_step', 'cfg_combine'], componentKinds: ['dit', 'text_encoder'] },
);
const record: JobRecord = { timestamp: 1_000, attemptsMade: 0, progress: { step: 3, steps: 8 } };

describe('jobViewOf', () => {
  it('names BullMQ states: waiting, delayed and prioritized are queued', () => {
    expect(['waiting', 'delayed', 'prioritized', 'waiting-children'].map(jobStateOf)).toEqual([
      'queued',
      'queued',
      'queued',
      'queued',
    ]);
    expect(['active', 'completed', 'failed'].map(jobStateOf)).toEqual([
      'active',
      'completed',
      'failed',
    ]);
  });

  it('shows reported progress while active and full progress once completed', () => {
    const read = { ok: true as const, payload };
    expect(jobViewOf(payload.id, payload.lane, 'active', record, read).progress).toEqual({
      step: 3,
      steps: 8,
    });
    const done = jobViewOf(
      payload.id,
      payload.lane,
      'completed',
      { ...record, finishedOn: 2_000 },
      read,
    );
    expect(done).toMatchObject({ status: 'completed', progress: { step: 8, steps: 8 } });
    expect(done.finishedAt).toBe(new Date(2_000).toISOString());
  });

  it('reads a failed job’s error from its failedReason envelope', () => {
    const failedReason = JSON.stringify({
      code: 'MODEL_INVALID_REQUEST',
      message: 'odd',
      details: {},
    });
    const view = jobViewOf(
      payload.id,
      payload.lane,
      'failed',
      { ...record, failedReason },
      {
        ok: true,
        payload,
      },
    );
    expect(view.error?.code).toBe('MODEL_INVALID_REQUEST');
    expect(JobViewSchema.safeParse(view).success).toBe(true);
  });

  it('makes a job with an unreadable payload failed with that code, whatever BullMQ says', () => {
    const error = new FlowfleetError('PROTO_INVALID_JOB', 'the stored job payload is not JSON');
    const view = jobViewOf(
      payload.id,
      payload.lane,
      'waiting',
      { ...record, progress: 'junk' },
      {
        ok: false,
        error,
      },
    );
    expect(view).toMatchObject({ status: 'failed', error: { code: 'PROTO_INVALID_JOB' } });
    expect(view.progress).toEqual({ step: 0, steps: 1 });
    expect(JobViewSchema.safeParse(view).success).toBe(true);
  });
});
