// A fleet on a real 3-master Redis Cluster (FLOWFLEET_REDIS_MODE=cluster): each lane's queue has
// its own hash tag, so lanes land on different masters while the control plane stays in one slot;
// rollouts run end to end (bit-identical to the same rollout on a single server), a weight sync
// reaches every worker, and a SIGKILLed child worker's job completes on the other one.
import { coordinatorKeys } from '@flowfleet/coordinator';
import { readRolloutFile } from '@flowfleet/formats';
import { encodeWeights } from '@flowfleet/models';
import { initWeights, wan21MiniCard } from '@flowfleet/models/wan21';
import { JobStatusSchema, laneForRequirements, SyncAckSchema } from '@flowfleet/protocol';
import { keySlot as clientKeySlot } from '@flowfleet/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  keySlot,
  nodeOfSlot,
  startRedisCluster,
  type RedisCluster,
} from '../harness/redis-cluster.js';
import { startRedisServer, uniquePrefix, type RedisServer } from '../harness/redis-server.js';
import { sendCommand } from '../harness/resp.js';
import { requirementsOf } from '../worker/direct-jobs.js';
import {
  startTestFleet,
  TOKENS,
  tinyRollout,
  waitUntil,
  type TestFleet,
} from '../worker/fleet-fixture.js';
import { spawnWorker, STARTUP_TIMEOUT_MS, type ChildWorker } from '../fleet/child-worker.js';

let cluster: RedisCluster;
let single: RedisServer;

beforeAll(async () => {
  [cluster, single] = await Promise.all([startRedisCluster(), startRedisServer()]);
});

afterAll(async () => {
  await Promise.all([cluster?.stop(), single?.stop()]);
});

/** Bodies whose requirements differ, so each has a lane of its own. */
const BODIES = [
  tinyRollout(),
  tinyRollout({ constraints: { devices: ['cpu'] } }),
  tinyRollout({ constraints: { minArch: { cpu: 'x86-64-v2' } } }),
  tinyRollout({ constraints: { devices: ['cpu'], minArch: { cpu: 'x86-64-v2' } } }),
];
const V3 = { device: 'cpu', arch: 'x86-64-v3', features: [], cpuArch: 'x86-64-v3' } as const;
const V4 = { device: 'cpu', arch: 'x86-64-v4', features: [], cpuArch: 'x86-64-v4' } as const;
/**
 * Workers here also rescan the lanes hash every 2 s (default 30 s): once in six runs a lane's job
 * waited out the default rescan (an announcement missed on the cluster's pub/sub, or the loaded
 * machine), which a rescan bounds. Tight polls keep idle lanes quick (no XREAD waker on a cluster).
 */
const CLUSTER_WORKER = { pollIntervalMs: 200, rescanIntervalMs: 2_000 } as const;

/** The master (index into cluster.nodes) of each slot range, as the cluster reports it. */
async function slotOwners(): Promise<(slot: number) => number> {
  const reply = await sendCommand(cluster.nodes[0]!, ['CLUSTER', 'SLOTS']);
  const ranges = (reply as [number, number, [string, number]][]).map(([from, to, master]) => ({
    from,
    to,
    node: cluster.nodes.findIndex((node) => node.port === master[1]),
  }));
  return (slot) => ranges.find((r) => slot >= r.from && slot <= r.to)?.node ?? -1;
}

/**
 * A fresh prefix under which the lanes' queues cover every master (a prefix is random, so a given
 * run could otherwise put all lanes on one shard and prove nothing).
 */
async function prefixSpreadingLanes(lanes: readonly string[]): Promise<string> {
  const owner = await slotOwners();
  for (let attempt = 0; attempt < 200; attempt++) {
    const prefix = uniquePrefix('cluster');
    const keys = coordinatorKeys(prefix);
    const masters = new Set(lanes.map((lane) => owner(clientKeySlot(keys.laneBullPrefix(lane)))));
    if (masters.size === cluster.nodes.length) return prefix;
  }
  throw new Error('no prefix spread the lanes over every master');
}

function clusterChildEnv(fleet: TestFleet): Record<string, string> {
  return {
    REDIS_URL: cluster.nodes[2]!.url, // any node is a seed
    FLOWFLEET_REDIS_MODE: 'cluster',
    FLOWFLEET_COORDINATOR_URL: fleet.url,
    FLOWFLEET_WORKER_TOKEN: TOKENS.worker,
    FLOWFLEET_PREFIX: fleet.prefix,
    FLOWFLEET_BACKEND: 'ort-cpu',
    FLOWFLEET_LOCK_MS: '2000',
    FLOWFLEET_STALLED_INTERVAL_MS: '1000',
    FLOWFLEET_POLL_MS: '200',
    FLOWFLEET_RESCAN_MS: '2000',
    FLOWFLEET_DRAIN_TIMEOUT_MS: '2000',
  };
}

describe('a fleet on a 3-master Redis Cluster', () => {
  it('spreads lanes over the masters, keeps the control plane in one slot, and runs rollouts and a sync', async () => {
    const lanes = BODIES.map((body) => laneForRequirements(requirementsOf(body)));
    expect(new Set(lanes).size).toBe(BODIES.length);
    const prefix = await prefixSpreadingLanes(lanes);
    const fleet = await startTestFleet(cluster.url, 'cluster', { redisMode: 'cluster', prefix });
    const reference = await startTestFleet(single.url, 'cluster-reference');
    try {
      const workers = [
        await fleet.startWorker({ platformFacts: V3, ...CLUSTER_WORKER }),
        await fleet.startWorker({ platformFacts: V3, ...CLUSTER_WORKER }),
      ];
      await reference.startWorker({ platformFacts: V3 });
      const jobs = await Promise.all(BODIES.map((body) => fleet.enqueue(body)));
      expect(jobs.map((job) => job.lane)).toEqual(lanes);
      for (const { id } of jobs) {
        const done = await fleet.waitForCompletion(id, 30_000);
        expect(workers.map((w) => w.workerId)).toContain(done.summary?.worker);
      }

      // Where the data is: each lane's queue on the master its own tag names, every master used.
      const keys = coordinatorKeys(fleet.prefix);
      const holders = new Set<number>();
      for (const lane of lanes) {
        const events = `${keys.laneBullPrefix(lane)}:${lane}:events`;
        const slot = await keySlot(cluster, events);
        expect(clientKeySlot(events)).toBe(slot); // the client's slot maths is the server's
        const holder = await nodeOfSlot(cluster, slot);
        expect(await sendCommand(cluster.nodes[holder]!, ['EXISTS', events])).toBe(1);
        expect(
          await sendCommand(cluster.nodes[holder]!, ['CLUSTER', 'COUNTKEYSINSLOT', String(slot)]),
        ).toBeGreaterThan(1); // the queue's other keys (job hashes, completed set) share the slot
        holders.add(holder);
      }
      expect(holders.size).toBe(3);
      const controlSlots = new Set(
        [keys.workers, keys.lanes, keys.limits, keys.acks('dit', 1), keys.weights('dit')].map(
          (key) => clientKeySlot(key),
        ),
      );
      expect(controlSlots.size).toBe(1);
      expect(await keySlot(cluster, keys.workers)).toBe([...controlSlots][0]);

      // The read routes span lanes (each in its own slot) and the control plane: all answer.
      for (const path of [
        '/healthz',
        '/metrics',
        '/v1/fleet',
        '/v1/fleet/matrix',
        '/v1/lanes',
        '/v1/rollouts?limit=20',
        '/v1/weights/dit',
      ]) {
        const response = await fleet.api(path);
        expect(response.status, `${path}: ${await response.clone().text()}`).toBe(200);
      }
      const listed = (await (await fleet.api('/v1/rollouts?limit=20')).json()) as {
        rollouts: { id: string }[];
      };
      expect(listed.rollouts.map((r) => r.id).sort()).toEqual(jobs.map((j) => j.id).sort());
      // A long-poll is woken by its job's events (read per slot on a cluster): a job held for
      // capacity starts when a worker that can serve it appears, and the waiting request answers
      // then, long before its waitMs.
      const held = await fleet.enqueue(
        tinyRollout({ constraints: { minArch: { cpu: 'x86-64-v4' } }, waitForCapacity: true }),
      );
      const poll = fleet.api(
        `/v1/rollouts/${held.id}?waitMs=25000&status=queued&step=0&attempts=0`,
      );
      const appeared = Date.now();
      workers.push(await fleet.startWorker({ platformFacts: V4, ...CLUSTER_WORKER }));
      const woken = JobStatusSchema.parse(await (await poll).json());
      expect(woken.status).not.toBe('queued');
      expect(Date.now() - appeared).toBeLessThan(15_000);
      await fleet.waitForCompletion(held.id, 30_000);

      // The same rollout on one server gives the same bytes: the mode changes where, not what.
      const clustered = await fleet.result(jobs[0]!.id);
      const alone = await reference.enqueue(BODIES[0]!);
      await reference.waitForCompletion(alone.id, 30_000);
      expect(Buffer.from(clustered).equals(Buffer.from(await reference.result(alone.id)))).toBe(
        true,
      );

      // A weight sync (its Lua script is one slot; its broadcast reaches every node's subscribers).
      await fleet.syncWeights('dit', 1, encodeWeights(initWeights(wan21MiniCard.config, 7, 'dit')));
      const acks = await waitUntil(async () => {
        const raw = await fleet.redis.hgetall(keys.acks('dit', 1));
        return workers.every((w) => raw[w.workerId] !== undefined) ? raw : undefined;
      }, 'every worker to ack dit v1');
      expect(
        Object.values(acks).map((json) => SyncAckSchema.parse(JSON.parse(json)).status),
      ).toEqual(['ok', 'ok', 'ok']);
      const after = await fleet.enqueue({ ...BODIES[1]!, weights: { dit: { min: 1 } } });
      const done = await fleet.waitForCompletion(after.id, 30_000);
      expect(done.summary?.weightsVersions).toEqual({ dit: 1, text_encoder: 0 });
      expect(readRolloutFile(await fleet.result(after.id)).metadata.weightsVersions).toEqual({
        dit: 1,
        text_encoder: 0,
      });
    } finally {
      await Promise.all([fleet.close(), reference.close()]);
    }
  }, 180_000);

  it('wakes an idle worker when a job is added to its lane, not at its next poll', async () => {
    const fleet = await startTestFleet(cluster.url, 'cluster-wake', { redisMode: 'cluster' });
    try {
      // A poll far longer than the bound below: only the lane-work channel can start a job in time.
      await fleet.startWorker({ pollIntervalMs: 60_000, rescanIntervalMs: 2_000 });
      const body = tinyRollout({ steps: 2 });
      // The first job opens the lane (the lane channel); the next ones find the worker idle. The
      // first is not timed: its bound is the lane's opening, which the poll backs up.
      await fleet.waitForCompletion((await fleet.enqueue(body)).id, 70_000);
      for (let round = 0; round < 3; round++) {
        const { id } = await fleet.enqueue(body);
        const done = await fleet.waitForCompletion(id, 70_000);
        const waitedMs = Date.parse(done.startedAt ?? '') - Date.parse(done.createdAt);
        // Without the wake-up a job waits for the poll: 60 s at most, under 10 s one time in six.
        expect(waitedMs, `round ${round}: queued ${waitedMs} ms`).toBeLessThan(10_000);
      }
    } finally {
      await fleet.close();
    }
  }, 180_000);

  it('a SIGKILLed worker loses nothing: its job completes on the other worker', async () => {
    const fleet = await startTestFleet(cluster.url, 'cluster-kill', { redisMode: 'cluster' });
    const children: ChildWorker[] = [];
    try {
      const workers = ['a', 'b'].map((name) =>
        spawnWorker(`${name}-${fleet.prefix.slice(-6)}`, clusterChildEnv(fleet)),
      );
      children.push(...workers);
      const heartbeat = (worker: ChildWorker): Promise<true> =>
        waitUntil(
          async () => {
            if (worker.process.exitCode !== null) {
              throw new Error(`worker ${worker.workerId} exited:\n${worker.output()}`);
            }
            const key = coordinatorKeys(fleet.prefix).heartbeat(worker.workerId);
            return (await fleet.redis.exists(key)) === 1 ? true : undefined;
          },
          `worker ${worker.workerId} to register`,
          STARTUP_TIMEOUT_MS,
        );
      await Promise.all(workers.map(heartbeat));
      const { id } = await fleet.enqueue(tinyRollout({ steps: 30 }));
      const running = await waitUntil(
        async () => {
          const status = await fleet.status(id);
          return status.status === 'active' && status.progress.step >= 2 ? status : undefined;
        },
        'the rollout to be under way',
        30_000,
      );
      const doomed = workers.find((worker) => worker.workerId === running.worker);
      const rescuer = workers.find((worker) => worker !== doomed);
      if (doomed === undefined || rescuer === undefined)
        throw new Error(`ran on ${running.worker}`);
      expect(await doomed.stop('SIGKILL')).toBe('SIGKILL');
      const done = await fleet.waitForCompletion(id, 40_000);
      expect(done.summary?.worker).toBe(rescuer.workerId);
      expect(done.attempts).toBeLessThanOrEqual(1);
      expect(await rescuer.stop('SIGTERM')).toBe(0);
    } finally {
      await Promise.all(children.map((child) => child.stop('SIGKILL')));
      await fleet.close();
    }
  }, 240_000);
});
