// The coordinator's side of the network: cut off from Redis it answers 503 with a code (not a
// hang) and recovers by itself when the link returns; killed between enqueueing a job and
// answering (the answer lost on the way back), the trainer SDK's retry under the same
// Idempotency-Key yields exactly one job.
import { FlowfleetClient } from '@flowfleet/client';
import { coordinatorKeys } from '@flowfleet/coordinator';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKENS, tinyRollout, waitUntil } from '../worker/fleet-fixture.js';
import { faultReport, type AcceptedJob } from './fault-report.js';
import { startNetFleet, workerIdOn, type NetFleet } from './net-fleet.js';

const COMMAND_TIMEOUT_MS = 1_000;

let fleet: NetFleet;
let trainer: FlowfleetClient;
/** Tries the SDK has had to repeat. */
let retries = 0;
const accepted: AcceptedJob[] = [];

beforeAll(async () => {
  fleet = await startNetFleet('net-coordinator', {
    workers: ['w1'],
    heartbeatTtlMs: 5_000,
    coordinatorEnv: { FLOWFLEET_REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS) },
  });
  await fleet.startCoordinator();
  await fleet.startWorker('w1');
  trainer = FlowfleetClient.create({
    baseUrl: fleet.coordinatorUrl,
    token: TOKENS.trainer,
    fetch: fleet.fetch,
    onRetry: () => {
      retries += 1;
    },
  });
}, 180_000);

afterAll(async () => {
  await trainer?.close();
  await fleet?.close();
}, 30_000);

/** A tiny rollout as the SDK's enqueue takes it. */
function request(
  overrides: Record<string, unknown>,
): Parameters<FlowfleetClient['enqueueRollouts']>[0] {
  return tinyRollout(overrides) as Parameters<FlowfleetClient['enqueueRollouts']>[0];
}

/** The jobs BullMQ holds in `lane` (any state) for the request with these seeds. */
async function jobsFor(lane: string, seeds: readonly number[]): Promise<string[]> {
  const queue = new Queue(lane, {
    connection: fleet.redis,
    prefix: coordinatorKeys(fleet.prefix).laneBullPrefix(lane),
  });
  try {
    const jobs = await queue.getJobs();
    return jobs
      .filter(
        (job) =>
          JSON.stringify((job.data as { request?: { seeds?: unknown } }).request?.seeds) ===
          JSON.stringify(seeds),
      )
      .map((job) => job.id ?? '');
  } finally {
    await queue.close();
  }
}

describe('a coordinator cut off from Redis', () => {
  it('answers 503 API_REDIS_UNAVAILABLE at once, and serves again by itself once the link returns', async () => {
    const pid = fleet.coordinator().process.pid;
    await fleet.network.cutBetween('coord', 'redis');
    const key = '2f1c9b7e-8a3d-4e5f-9a0b-1c2d3e4f5a6b';
    const body = tinyRollout({ seeds: [31, 32] });
    const started = performance.now();
    const refused = await fleet.api('/v1/rollouts', {
      json: body,
      headers: { 'idempotency-key': key },
    });
    const refusedMs = performance.now() - started;
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ code: 'API_REDIS_UNAVAILABLE' });
    // Bounded by the command timeout, not by TCP giving up minutes later.
    expect(refusedMs).toBeLessThan(COMMAND_TIMEOUT_MS + 3_000);
    const fleetView = await fleet.api('/v1/fleet');
    expect(fleetView.status).toBe(503);
    expect(fleetView.body).toMatchObject({ code: 'API_REDIS_UNAVAILABLE' });
    const health = await fleet.api('/healthz');
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ code: 'COORD_REDIS_UNAVAILABLE' });

    // The SDK retries its enqueue (same key every try) through the partition.
    const retried = trainer.enqueueRollouts(request({ seeds: [33, 34] }), {
      timeoutMs: 5_000,
      retry: { attempts: Number.POSITIVE_INFINITY, maxDelayMs: 1_000, deadlineMs: 60_000 },
    });
    const retriesBefore = retries;
    await waitUntil(() => (retries > retriesBefore ? true : undefined), 'a try to fail', 20_000);
    await fleet.network.restoreBetween('coord', 'redis');
    const answer = await retried;
    accepted.push({ id: answer.id, lane: answer.lane });
    // The refused request, sent again with its key, enqueues (once).
    const again = await fleet.api('/v1/rollouts', {
      json: body,
      headers: { 'idempotency-key': key },
    });
    expect(again.status).toBe(202);
    const job = again.body as AcceptedJob;
    accepted.push(job);
    expect(job.id).toBe(`${job.lane}.${key}`);
    expect(fleet.coordinator().process.pid).toBe(pid); // the same process: no restart
    for (const { id } of accepted) {
      expect((await fleet.waitForCompletion(id, 60_000)).summary?.worker).toBe(
        workerIdOn(fleet, 'w1'),
      );
    }
    // One job per request, whatever the cut left half-done.
    expect(await jobsFor(job.lane, [31, 32])).toEqual([job.id]);
    expect(await jobsFor(job.lane, [33, 34])).toEqual([answer.id]);
    const report = await faultReport(fleet, accepted);
    expect(report).toEqual({ accepted: 2, completed: 2, lost: 0, duplicated: 0, mismatched: 0 });
  }, 240_000);
});

describe('a coordinator killed between enqueueing and answering', () => {
  it('the SDK retries with the same Idempotency-Key and gets exactly one job', async () => {
    const lane = accepted[0]?.lane ?? '';
    const seeds = [41, 42];
    // The trainer's connection is up; from now on what the coordinator sends it is lost.
    expect((await fleet.api('/healthz')).status).toBe(200);
    await fleet.network.cutFrom('coord', 'trainer');
    const retriesBefore = retries;
    const enqueued = trainer.enqueueRollouts(request({ seeds }), {
      timeoutMs: 3_000,
      retry: { attempts: Number.POSITIVE_INFINITY, maxDelayMs: 1_000, deadlineMs: 90_000 },
    });
    // The request arrived: its job is in Redis, the answer is on its way to nowhere.
    await waitUntil(
      async () => ((await jobsFor(lane, seeds)).length > 0 ? true : undefined),
      'the job to be enqueued',
      20_000,
    );
    expect(await fleet.coordinator().stop('SIGKILL')).toBe('SIGKILL');
    // The killed process's answer is still in its kernel's send buffer, retransmitted until the
    // link lets it through: keep the cut until the SDK has given that try up (it timed out).
    await waitUntil(() => (retries > retriesBefore ? true : undefined), 'the SDK to retry', 20_000);
    await fleet.network.restoreFrom('coord', 'trainer');
    await fleet.startCoordinator();
    const answer = await enqueued;
    expect(answer.lane).toBe(lane);
    accepted.push({ id: answer.id, lane: answer.lane });
    expect(await jobsFor(lane, seeds)).toEqual([answer.id]);
    await fleet.waitForCompletion(answer.id, 60_000);
    const report = await faultReport(fleet, accepted);
    expect(report).toEqual({ accepted: 3, completed: 3, lost: 0, duplicated: 0, mismatched: 0 });
  }, 300_000);
});
