// A worker cut off from Redis and the coordinator mid-job, for longer than its lock: the job
// completes elsewhere; when the link returns, the stale worker's late upload is refused with a
// code whether its bytes are identical or differ (a weight sync happened meanwhile): it no longer
// holds the job (API_RESULT_NOT_HOLDER, ADR 014), so it notices it lost the job (WORKER_JOB_LOST)
// and rejoins the fleet; the stored result stays the rescuer's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tinyRollout, waitUntil } from '../worker/fleet-fixture.js';
import type { HostProcess } from '../harness/netns-process.js';
import { faultReport, type AcceptedJob } from './fault-report.js';
import { startNetFleet, workerIdOn, type NetFleet } from './net-fleet.js';
import { manifestWeights, resultOf, syncDit, waitForLog } from './net-helpers.js';

/** Locks short enough that a cut worker's job moves on within seconds. */
const WORKER_ENV = {
  FLOWFLEET_LOCK_MS: '2000',
  FLOWFLEET_STALLED_INTERVAL_MS: '1000',
  FLOWFLEET_UPLOAD_RETRY_MS: '60000',
};
const HEARTBEAT_TTL_MS = 3_000;

let fleet: NetFleet;
/** Every job this file enqueued (one fleet, one lane: each report covers all of them). */
const accepted: AcceptedJob[] = [];
const expected = new Map<string, Uint8Array>();

beforeAll(async () => {
  fleet = await startNetFleet('net-partition', {
    workers: ['w1', 'w2', 'w3'],
    heartbeatTtlMs: HEARTBEAT_TTL_MS,
  });
  await fleet.startCoordinator();
}, 180_000);

afterAll(async () => {
  await fleet?.close();
}, 30_000);

async function enqueue(body: Record<string, unknown>): Promise<AcceptedJob> {
  const answer = await fleet.api('/v1/rollouts', { json: body });
  if (answer.status !== 202)
    throw new Error(`enqueue: ${answer.status} ${JSON.stringify(answer.body)}`);
  const job = answer.body as AcceptedJob;
  accepted.push(job);
  return job;
}

/**
 * Each test's partitioned rollout: the most steps a request may take, so that on a busy machine the
 * worker is still denoising when the cut lands (at 30 steps it once finished and uploaded between
 * the test seeing step 2 and the cut: the job completed on the worker being cut).
 */
const PARTITIONED_STEPS = 100;

/** Enqueues `body` and waits until `host`'s worker is a few steps into it. */
async function startedOn(host: string, body: Record<string, unknown>): Promise<AcceptedJob> {
  const job = await enqueue(body);
  const running = await waitUntil(
    async () => {
      const status = await fleet.status(job.id);
      return status.status === 'active' && status.progress.step >= 2 ? status : undefined;
    },
    'the rollout to be under way',
    60_000,
  );
  expect(running.worker).toBe(workerIdOn(fleet, host));
  return job;
}

/** The cut landed mid-rollout: the job is still active, short of its last step. */
async function expectStillRunning(id: string): Promise<void> {
  const status = await fleet.status(id);
  expect(status.status, 'the cut must land before the rollout ends').toBe('active');
  expect(status.progress.step).toBeLessThan(status.progress.steps);
}

describe('a worker partitioned mid-job for longer than its lock', () => {
  let w1: HostProcess;
  const w1Id = (): string => workerIdOn(fleet, 'w1');

  it('loses the job to another worker; its late upload is refused (not the holder); it rejoins', async () => {
    w1 = await fleet.startWorker('w1', WORKER_ENV);
    const body = tinyRollout({ steps: PARTITIONED_STEPS });
    const job = await startedOn('w1', body);
    const mark = w1.printed();
    await fleet.network.cut('w1');
    await expectStillRunning(job.id);
    // The rescuer starts only now, so it cannot have taken the job any other way.
    const w2 = await fleet.startWorker('w2', WORKER_ENV);
    const done = await fleet.waitForCompletion(job.id, 60_000);
    expect(done.summary?.worker).toBe(workerIdOn(fleet, 'w2'));
    // Really cut: its heartbeat lapsed (its rollout goes on computing; its progress reports
    // and so its upload wait for Redis).
    await waitUntil(
      async () => ((await fleet.isAlive(w1Id())) ? undefined : true),
      'w1 dead',
      15_000,
    );

    await fleet.network.restore('w1');
    await waitForLog(w1, mark, /API_RESULT_NOT_HOLDER/, 'the refused late upload');
    await waitForLog(w1, mark, /"code":"WORKER_JOB_LOST"/, 'w1 to notice it lost the job');
    await waitUntil(
      async () => ((await fleet.isAlive(w1Id())) ? true : undefined),
      'w1 back',
      15_000,
    );

    // It serves again: with the rescuer gone, the next job must be its.
    expect(await w2.stop('SIGTERM')).toBe(0);
    const next = await enqueue(tinyRollout({ seeds: [5, 6] }));
    expect((await fleet.waitForCompletion(next.id, 30_000)).summary?.worker).toBe(w1Id());
    // The stored result is the one an undisturbed run produces.
    const reference = await enqueue(body);
    await fleet.waitForCompletion(reference.id, 30_000);
    expected.set(job.id, await resultOf(fleet, reference.id));
    const report = await faultReport(fleet, accepted, expected);
    expect(report).toEqual({ accepted: 3, completed: 3, lost: 0, duplicated: 0, mismatched: 0 });
  }, 360_000);

  it('refuses, with a code, a late upload whose bytes differ after a weight sync', async () => {
    const body = tinyRollout({ steps: PARTITIONED_STEPS, seeds: [21, 22] });
    const job = await startedOn('w1', body);
    const mark = w1.printed();
    const coordinatorMark = fleet.coordinator().printed();
    await fleet.network.cut('w1');
    await expectStillRunning(job.id);
    // A new dit version while w1 is away: the job's next attempt runs on it.
    await syncDit(fleet, 1, 7);
    const w3 = await fleet.startWorker('w3', WORKER_ENV);
    const done = await fleet.waitForCompletion(job.id, 60_000);
    expect(done.summary?.worker).toBe(workerIdOn(fleet, 'w3'));
    expect(done.summary?.weightsVersions).toMatchObject({ dit: 1 });
    const stored = await resultOf(fleet, job.id);

    await fleet.network.restore('w1');
    await waitForLog(w1, mark, /API_RESULT_NOT_HOLDER/, 'the refused late upload');
    await waitForLog(w1, mark, /"code":"WORKER_JOB_LOST"/, 'w1 to notice it lost the job');
    await waitForLog(
      fleet.coordinator(),
      coordinatorMark,
      /"code":"API_RESULT_NOT_HOLDER"/,
      'the coordinator to log the refusal',
    );
    // The refused upload replaced nothing, and the job stays completed by w3.
    expect(Buffer.from(await resultOf(fleet, job.id)).equals(Buffer.from(stored))).toBe(true);
    expect((await fleet.status(job.id)).summary?.worker).toBe(workerIdOn(fleet, 'w3'));
    // w1 rejoins on the new version (it catches the sync up once its link is back).
    await waitUntil(
      async () => ((await fleet.isAlive(w1Id())) ? true : undefined),
      'w1 back',
      15_000,
    );
    await waitUntil(
      async () => ((await manifestWeights(fleet, w1Id()))['dit'] === 1 ? true : undefined),
      'w1 on dit v1',
      30_000,
    );
    expect(await w1.stop('SIGTERM')).toBe(0);
    const reference = await enqueue(body);
    await fleet.waitForCompletion(reference.id, 30_000);
    expected.set(job.id, await resultOf(fleet, reference.id));
    const report = await faultReport(fleet, accepted, expected);
    expect(report).toEqual({ accepted: 5, completed: 5, lost: 0, duplicated: 0, mismatched: 0 });
    expect(await w3.stop('SIGTERM')).toBe(0);
  }, 360_000);
});
