import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import type { JobStatus } from '@flowfleet/protocol';
import { describe, expect, it } from 'vitest';
import { waitForJob, type JobStatusSource } from './wait-for-job.js';

const LANE = 'lane-0123456789abcdef';

function status(
  state: JobStatus['status'],
  step: number,
  extra: Partial<JobStatus> = {},
): JobStatus {
  return {
    id: 'job-1',
    lane: LANE,
    status: state,
    progress: { step, steps: 4 },
    attempts: state === 'queued' ? 0 : 1,
    createdAt: new Date(0).toISOString(),
    ...extra,
  };
}

/** Answers the scripted statuses in turn, repeating the last one. */
function source(statuses: JobStatus[]): JobStatusSource & { polls: number } {
  return {
    polls: 0,
    async status() {
      this.polls += 1;
      return statuses[Math.min(this.polls - 1, statuses.length - 1)] as JobStatus;
    },
  };
}

async function failure(promise: Promise<unknown>): Promise<FlowfleetError> {
  try {
    await promise;
  } catch (error) {
    if (isFlowfleetError(error)) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

const summary = { id: 'job-1' } as JobStatus['summary'];

describe('waitForJob', () => {
  it('reports each change once and resolves with the completed status', async () => {
    const jobs = source([
      status('queued', 0),
      status('queued', 0),
      status('active', 1),
      status('active', 1),
      status('active', 3),
      status('completed', 4, { summary }),
    ]);
    const seen: string[] = [];
    const done = await waitForJob(jobs, 'job-1', {
      pollMs: 1,
      onProgress: (s) => seen.push(`${s.status}:${s.progress.step}`),
    });
    expect(done.status).toBe('completed');
    expect(seen).toEqual(['queued:0', 'active:1', 'active:3', 'completed:4']);
    expect(jobs.polls).toBe(6);
  });

  it("throws CLIENT_JOB_FAILED carrying the server's envelope, with its code as the cause", async () => {
    const error = {
      code: 'WORKER_JOB_UNSERVABLE',
      message: 'not my lane',
      details: { lane: LANE },
    };
    const jobs = source([
      status('active', 1),
      status('failed', 1, { error, attempts: 3, worker: 'w-1' }),
    ]);
    const thrown = await failure(waitForJob(jobs, 'job-1', { pollMs: 1 }));
    expect(thrown.code).toBe('CLIENT_JOB_FAILED');
    expect(thrown.details).toMatchObject({ id: 'job-1', attempts: 3, worker: 'w-1', error });
    expect(thrown.message).toMatch(/WORKER_JOB_UNSERVABLE: not my lane/);
    expect(isFlowfleetError(thrown.cause, 'WORKER_JOB_UNSERVABLE')).toBe(true);
  });

  it('reads a failed status twice and reports the second (consistent) one', async () => {
    const stale = { code: 'INTERNAL_ERROR', message: 'the job failed', details: {} };
    const error = { code: 'RT_NON_FINITE', message: 'NaN at step 2', details: { step: 2 } };
    const jobs = source([
      status('failed', 1, { error: stale, attempts: 0 }),
      status('failed', 1, { error, attempts: 1 }),
    ]);
    const thrown = await failure(waitForJob(jobs, 'job-1', { pollMs: 1 }));
    expect(thrown.details).toMatchObject({ error, attempts: 1 });
    expect(jobs.polls).toBe(2);
  });

  it('keeps an unknown server code in details only', async () => {
    const error = { code: 'WORKER_SOMETHING_NEW', message: 'new', details: {} };
    const thrown = await failure(waitForJob(source([status('failed', 0, { error })]), 'job-1'));
    expect(thrown.code).toBe('CLIENT_JOB_FAILED');
    expect(thrown.cause).toBeUndefined();
  });

  it('throws CLIENT_TIMEOUT with the last status after timeoutMs', async () => {
    const thrown = await failure(
      waitForJob(source([status('active', 2)]), 'job-1', { pollMs: 1, timeoutMs: 30 }),
    );
    expect(thrown.code).toBe('CLIENT_TIMEOUT');
    expect(thrown.details).toMatchObject({ what: 'waitFor', last: { progress: { step: 2 } } });
  });

  it('throws CLIENT_ABORTED when the signal fires between polls', async () => {
    const controller = new AbortController();
    const jobs = source([status('active', 1)]);
    const pending = failure(
      waitForJob(jobs, 'job-1', { longPollMs: 0, pollMs: 60_000, signal: controller.signal }),
    );
    await expect.poll(() => jobs.polls).toBe(1);
    controller.abort(new Error('stop'));
    const thrown = await pending;
    expect(thrown.code).toBe('CLIENT_ABORTED');
    expect((thrown.cause as Error).message).toBe('stop');
  });

  it('backs off while nothing changes', async () => {
    const jobs = source([status('active', 1)]);
    const started = Date.now();
    await failure(
      waitForJob(jobs, 'job-1', { longPollMs: 0, pollMs: 10, maxPollMs: 1_000, timeoutMs: 300 }),
    );
    // Fixed 10 ms polling would take ~30 polls; ×1.5 backoff takes ~8.
    expect(jobs.polls).toBeLessThan(15);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('long-polls: asks again at once after a change, passing what it last saw', async () => {
    const seen: (string | undefined)[] = [];
    const script = [
      status('queued', 0),
      status('active', 1),
      status('active', 2),
      status('completed', 4),
    ];
    let calls = 0;
    const jobs: JobStatusSource = {
      async status(_id, _call, wait) {
        seen.push(
          wait === undefined
            ? undefined
            : `${wait.waitMs}:${wait.seen.status}:${wait.seen.progress.step}`,
        );
        return script[Math.min(calls++, script.length - 1)]!;
      },
    };
    const started = Date.now();
    const done = await waitForJob(jobs, 'job-1', { longPollMs: 5_000, pollMs: 60_000 });
    expect(done.status).toBe('completed');
    // No poll interval was slept (it is a minute): every answer was a change.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(seen).toEqual([undefined, '5000:queued:0', '5000:active:1', '5000:active:2']);
  });

  it('falls back to sleeping when a long-poll answers unchanged at once (nobody waited)', async () => {
    const jobs = source([status('active', 1)]);
    const started = Date.now();
    await failure(waitForJob(jobs, 'job-1', { longPollMs: 1_000, pollMs: 50, timeoutMs: 400 }));
    // A busy loop would ask hundreds of times; sleeping with ×1.5 backoff asks a handful.
    expect(jobs.polls).toBeLessThan(12);
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
  });

  it('refuses a long-poll outside [0, 30 000] ms', async () => {
    const thrown = await failure(
      waitForJob(source([status('queued', 0)]), 'job-1', { longPollMs: 30_001 }),
    );
    expect(thrown.code).toBe('CLIENT_INVALID_OPTIONS');
  });

  it('refuses a non-positive poll interval', async () => {
    const thrown = await failure(waitForJob(source([status('queued', 0)]), 'job-1', { pollMs: 0 }));
    expect(thrown).toBeInstanceOf(FlowfleetError);
    expect(thrown.code).toBe('CLIENT_INVALID_OPTIONS');
  });
});
