// Soak-only (npm run soak:network; ~2 min, so not in CI's test run): a worker cut off from the
// blob source (the coordinator) during a weight sync ends on the old version — its download try
// times out (30 s), its ack says `failed` with the code and reason — or, when the link returns
// within its download retry bound, on the new one; never on a mixture. What it then runs is
// exactly the version its manifest shows (the same bytes as another worker on that version).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tinyRollout, waitUntil } from '../worker/fleet-fixture.js';
import { faultReport, type AcceptedJob } from './fault-report.js';
import { startNetFleet, workerIdOn, type NetFleet } from './net-fleet.js';
import { ackOf, manifestWeights, resultOf, syncDit, waitForLog } from './net-helpers.js';

let fleet: NetFleet;
const accepted: AcceptedJob[] = [];

beforeAll(async () => {
  fleet = await startNetFleet('net-sync', { workers: ['w1', 'w2'], heartbeatTtlMs: 5_000 });
  await fleet.startCoordinator();
  await syncDit(fleet, 1, 7);
}, 90_000);

afterAll(async () => {
  await fleet?.close();
}, 30_000);

async function enqueue(body: Record<string, unknown>): Promise<AcceptedJob> {
  const answer = await fleet.api('/v1/rollouts', { json: body });
  if (answer.status !== 202) throw new Error(`enqueue: ${answer.status}`);
  const job = answer.body as AcceptedJob;
  accepted.push(job);
  return job;
}

describe('a worker cut off from the blob source during a weight sync', () => {
  it('ends on the old or the new version, never between, and its ack says why', async () => {
    const w1 = await fleet.startWorker('w1');
    const w1Id = workerIdOn(fleet, 'w1');
    const onDit = (version: number) =>
      waitUntil(
        async () => ((await manifestWeights(fleet, w1Id))['dit'] === version ? true : undefined),
        `w1 on dit v${version}`,
        30_000,
      );
    await onDit(1);

    // Cut for longer than its download bound: it stays on v1, and its ack says why.
    await fleet.network.cutBetween('w1', 'coord');
    const syncedAt = Date.now();
    await syncDit(fleet, 2, 8);
    const refused = await ackOf(fleet, w1Id, 2, 60_000);
    console.log(
      `sync cut: acked ${refused.status} after ${Date.now() - syncedAt} ms: ${refused.code} ${refused.reason}`,
    );
    expect(refused.status).toBe('failed');
    expect(refused.reason).toBeTruthy();
    expect(refused.code).toMatch(/^CLIENT_/);
    expect((await manifestWeights(fleet, w1Id))['dit']).toBe(1);

    // Cut, then restored within the bound once a download has failed: it ends on v3.
    const mark = w1.printed();
    await syncDit(fleet, 3, 9);
    await waitForLog(
      w1,
      mark,
      /coordinator request failed; retrying/,
      'a download to fail',
      60_000,
    );
    await fleet.network.restoreBetween('w1', 'coord');
    expect((await ackOf(fleet, w1Id, 3, 60_000)).status).toBe('ok');
    await onDit(3);
    const probe = tinyRollout({ seeds: [51, 52], weights: { dit: { exact: 3 } } });
    const job = await enqueue(probe);
    const done = await fleet.waitForCompletion(job.id, 30_000);
    expect(done.summary?.worker).toBe(w1Id);
    expect(done.summary?.weightsVersions).toMatchObject({ dit: 3 });
    expect(await w1.stop('SIGTERM')).toBe(0);
    await fleet.startWorker('w2');
    const reference = await enqueue(probe);
    expect((await fleet.waitForCompletion(reference.id, 30_000)).summary?.worker).toBe(
      workerIdOn(fleet, 'w2'),
    );
    const report = await faultReport(
      fleet,
      accepted,
      new Map([[job.id, await resultOf(fleet, reference.id)]]),
    );
    expect(report).toEqual({ accepted: 2, completed: 2, lost: 0, duplicated: 0, mismatched: 0 });
  }, 240_000);
});
