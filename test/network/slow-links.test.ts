// Slow and lossy links between the workers and Redis: every Redis byte a worker sends or gets is
// held 200 ± 50 ms each way by a relay on a `wan` host (this kernel has no netem), and 5 % of the
// packets on each worker's link are dropped each way. Rollouts still complete, none is lost or
// duplicated, twins (the same request twice) give the same bytes, and no worker is ever shown
// dead: its heartbeat, refreshed every TTL/3, always lands within the TTL (README "Heartbeats").
import { readRolloutFile } from '@flowfleet/formats';
import { WorkerHeartbeatSchema } from '@flowfleet/protocol';
import { coordinatorKeys } from '@flowfleet/coordinator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKENS, tinyRollout, waitUntil } from '../worker/fleet-fixture.js';
import { faultReport, type AcceptedJob } from './fault-report.js';
import { delayRelay } from '../harness/netns-process.js';
import { startNetFleet, workerIdOn, type NetFleet } from './net-fleet.js';

const HEARTBEAT_TTL_MS = 6_000;
const DELAY_MS = 200;
const JITTER_MS = 50;
const LOSS_PERCENT = 5;
const WORKERS = ['w1', 'w2'];

let fleet: NetFleet;

beforeAll(async () => {
  fleet = await startNetFleet('net-slow', {
    workers: WORKERS,
    extraHosts: ['wan'],
    heartbeatTtlMs: HEARTBEAT_TTL_MS,
  });
  await fleet.startCoordinator();
  const wan = fleet.network.host('wan').address;
  const relay = await fleet.startRelay('wan', {
    listen: `${wan}:6379`,
    target: fleet.network.host('redis').address,
    port: 6379,
    delayMs: DELAY_MS,
    jitterMs: JITTER_MS,
    delayLater: true,
  });
  // Both workers reach Redis only through the `wan` hop; it and their links turn slow and lossy
  // once they run (starting up over them would only cost CI time).
  await Promise.all(
    WORKERS.map((host) => fleet.startWorker(host, { REDIS_URL: `redis://${wan}:6379` })),
  );
  await delayRelay(relay);
  for (const host of WORKERS) await fleet.network.setLoss(host, LOSS_PERCENT);
}, 300_000);

afterAll(async () => {
  await fleet?.close();
}, 30_000);

async function resultOf(id: string): Promise<Uint8Array> {
  const response = await fleet.fetch(`${fleet.coordinatorUrl}/v1/rollouts/${id}/result`, {
    headers: { authorization: `Bearer ${TOKENS.viewer}` },
  });
  if (response.status !== 200) throw new Error(`result ${id}: ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** Waits until every worker's heartbeat lists `lane` among the lanes it serves. */
async function bothServe(keys: ReturnType<typeof coordinatorKeys>, lane: string): Promise<void> {
  await waitUntil(
    async () => {
      for (const host of WORKERS) {
        const raw = await fleet.redis.get(keys.heartbeat(workerIdOn(fleet, host)));
        const beat = raw === null ? undefined : WorkerHeartbeatSchema.parse(JSON.parse(raw));
        if (beat?.lanes.includes(lane) !== true) return undefined;
      }
      return true;
    },
    `both workers to serve ${lane}`,
    60_000,
  );
}

describe('workers on slow, lossy links to Redis', () => {
  it('complete every rollout, once and right, and are never shown dead', async () => {
    const keys = coordinatorKeys(fleet.prefix);
    // Watch every heartbeat all along: each poll must find it; note the gaps between refreshes.
    let watching = true;
    const missed: string[] = [];
    const lastAt = new Map<string, number>();
    let maxGapMs = 0;
    const watcher = (async () => {
      while (watching) {
        for (const host of WORKERS) {
          const id = workerIdOn(fleet, host);
          const raw = await fleet.redis.get(keys.heartbeat(id));
          if (raw === null) {
            missed.push(`${id} at ${new Date().toISOString()}`);
            continue;
          }
          const at = Date.parse(WorkerHeartbeatSchema.parse(JSON.parse(raw)).at);
          const previous = lastAt.get(id);
          if (previous !== undefined && at > previous) maxGapMs = Math.max(maxGapMs, at - previous);
          lastAt.set(id, at);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const started = Date.now();
    const jobs: AcceptedJob[] = [];
    try {
      // Four requests, each enqueued twice: twins must give the same bytes.
      for (let i = 0; i < 4; i++) {
        for (let copy = 0; copy < 2; copy++) {
          const answer = await fleet.api('/v1/rollouts', {
            json: tinyRollout({ seeds: [100 + i, 200 + i], steps: 4 }),
          });
          expect(answer.status).toBe(202);
          jobs.push(answer.body as AcceptedJob);
          // The first enqueue made the lane: the rest wait until both workers serve it (their
          // heartbeats say so), or the first to hear of it could take every job.
          if (jobs.length === 1) await bothServe(keys, (answer.body as AcceptedJob).lane);
        }
      }
      const workersSeen = new Set<string>();
      for (const { id } of jobs) {
        const done = await fleet.waitForCompletion(id, 120_000);
        workersSeen.add(done.summary?.worker ?? '');
      }
      // Both took part, and the run outlasted two TTLs (so a lapse would have shown).
      expect(workersSeen.size).toBe(2);
      while (Date.now() - started < 2 * HEARTBEAT_TTL_MS) {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    } finally {
      watching = false;
      await watcher;
    }
    const expected = new Map<string, Uint8Array>();
    for (let i = 0; i < jobs.length; i += 2) {
      const [first, twin] = [jobs[i], jobs[i + 1]];
      if (first === undefined || twin === undefined) continue;
      const bytes = await resultOf(first.id);
      expect(readRolloutFile(bytes).seeds).toEqual([100 + i / 2, 200 + i / 2]);
      expected.set(twin.id, bytes);
    }
    const report = await faultReport(fleet, jobs, expected);
    console.log(
      `slow links: ${jobs.length} rollouts in ${Date.now() - started} ms, heartbeat TTL ${HEARTBEAT_TTL_MS} ms, ` +
        `longest gap between heartbeat refreshes ${maxGapMs} ms`,
    );
    expect(missed).toEqual([]);
    expect(maxGapMs).toBeLessThan(HEARTBEAT_TTL_MS);
    // The path really was slow: a refresh follows the previous one's answer, a round trip late.
    expect(maxGapMs).toBeGreaterThan(HEARTBEAT_TTL_MS / 3 + 2 * (DELAY_MS - JITTER_MS));
    expect(report).toEqual({ accepted: 8, completed: 8, lost: 0, duplicated: 0, mismatched: 0 });
    const view = await fleet.api('/v1/fleet');
    expect(view.status).toBe(200);
  }, 300_000);
});
