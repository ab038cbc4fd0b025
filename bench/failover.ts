// bench:failover — what Redis Sentinel failover costs flowfleet (ADR 010).
// (a) The loss window of asynchronous replication: a coordinator in FLOWFLEET_REDIS_MODE=sentinel
//     under a steady enqueue flow (trainers in closed loops, `waitForCapacity` so no worker is
//     needed); the master is SIGKILLed, the sentinels promote a replica, and every acknowledged
//     enqueue is looked up again: lost = acknowledged but gone, with how many ms before the kill
//     each was acknowledged. Trials with WAIT 0 and WAIT 1, with healthy replicas and with
//     replicas stalled (DEBUG SLEEP, links cut) for the last moments before the kill.
// (b) The cost of FLOWFLEET_REDIS_WAIT_REPLICAS=1: enqueue latency p50/p99 and throughput with
//     WAIT 0 and WAIT 1, two coordinators on the same Sentinel set, interleaved rounds.
// Usage: flock /tmp/ffbench.lock nice -n 0 npm run bench:failover [-- --trials 3 --seconds 4 --concurrency 4]
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startRedisSentinel, type RedisSentinelSet } from '@flowfleet/cli/local-redis';
import { createCoordinator, type Coordinator } from '@flowfleet/coordinator';
import { createRedis, type ReplicationPolicy } from '@flowfleet/redis';
import type { Redis } from 'ioredis';
import { percentile, printTable, round, writeResults } from './lib/bench-report.js';

const { values: args } = parseArgs({
  options: {
    trials: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '4' },
    concurrency: { type: 'string', default: '4' },
  },
});
const TRIALS = Number(args.trials);
const SECONDS = Number(args.seconds);
const CONCURRENCY = Number(args.concurrency);
const WAIT_1: ReplicationPolicy = { replicas: 1, timeoutMs: 500 };
const WAIT_0: ReplicationPolicy = { replicas: 0, timeoutMs: 0 };
const TOKEN = 'bench-failover-trainer-token-0123456789';
const TOKENS = { trainer: TOKEN, viewer: `${TOKEN}-v`, worker: `${TOKEN}-w` };
const BODY = JSON.stringify({
  model: 'wan21-mini',
  prompt: 'a red fox in the snow',
  seeds: [1, 2],
  steps: 2,
  shape: { frames: 1, height: 8, width: 8 },
  waitForCapacity: true,
});

interface Running {
  readonly coordinator: Coordinator;
  readonly url: string;
  readonly blobDir: string;
}

async function startCoordinator(
  set: RedisSentinelSet,
  prefix: string,
  replication: ReplicationPolicy,
): Promise<Running> {
  const blobDir = await mkdtemp(join(tmpdir(), 'flowfleet-bench-failover-'));
  const coordinator = createCoordinator({
    redisUrl: set.url,
    redisMode: 'sentinel',
    redisReplication: replication,
    prefix,
    tokens: TOKENS,
    blobDir,
  });
  return { coordinator, url: await coordinator.start(0), blobDir };
}

async function stopCoordinator(running: Running): Promise<void> {
  await running.coordinator.close();
  await rm(running.blobDir, { recursive: true, force: true });
}

/** One enqueue under `key`, retried (same key) until accepted or `deadline`; its latency. */
async function enqueue(url: string, key: string, deadline: number): Promise<string | undefined> {
  for (;;) {
    try {
      const response = await fetch(`${url}/v1/rollouts`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          'idempotency-key': key,
        },
        body: BODY,
      });
      const text = await response.text();
      if (response.status === 202) return (JSON.parse(text) as { id: string }).id;
      if (response.status !== 503) throw new Error(`enqueue ${response.status}: ${text}`);
    } catch (error) {
      if ((error as Error).message.startsWith('enqueue')) throw error;
    }
    if (Date.now() > deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface Ack {
  readonly id: string;
  readonly sentAt: number;
  readonly at: number;
}

/** Closed-loop trainers posting until `stop()`; every accepted enqueue with its times. */
function flow(url: string): { acks: Ack[]; stop: () => Promise<void> } {
  const acks: Ack[] = [];
  let going = true;
  const loop = async (): Promise<void> => {
    while (going) {
      const sentAt = Date.now();
      const id = await enqueue(url, randomUUID(), Date.now() + 30_000);
      if (id !== undefined) acks.push({ id, sentAt, at: Date.now() });
    }
  };
  const loops = Array.from({ length: CONCURRENCY }, loop);
  return {
    acks,
    stop: async () => {
      going = false;
      await Promise.all(loops);
    },
  };
}

/** The replicas stall and lose their links (they cannot reconnect while asleep). */
async function stallReplicas(set: RedisSentinelSet, masterPort: number, seconds: number) {
  const master = createRedis(`redis://127.0.0.1:${masterPort}`) as Redis;
  const replicas = set.nodes
    .filter((node) => node.port !== masterPort && node.running)
    .map((node) => createRedis(node.url) as Redis);
  await Promise.all([master.ping(), ...replicas.map((r) => r.ping())]);
  const stalls = replicas.map((r) => r.call('DEBUG', 'SLEEP', seconds).catch(() => undefined));
  await master.call('CLIENT', 'KILL', 'TYPE', 'replica');
  master.disconnect();
  return async () => {
    await Promise.all(stalls);
    for (const r of replicas) r.disconnect();
  };
}

interface TrialResult {
  readonly wait: number;
  readonly stalledReplicas: boolean;
  readonly accepted: number;
  readonly acceptedAfterFailover: number;
  readonly lost: number;
  /** For each lost enqueue: ms between its acknowledgement and the kill. */
  readonly lostAckedMsBeforeKill: number[];
  readonly failoverMs: number;
}

async function lossTrial(replication: ReplicationPolicy, stall: boolean): Promise<TrialResult> {
  const set = await startRedisSentinel({
    replicas: 2,
    downAfterMs: 1_000,
    failoverTimeoutMs: 3_000,
    enableDebugCommand: true,
  });
  const running = await startCoordinator(set, `bf${randomUUID().slice(0, 8)}`, replication);
  try {
    const trainers = flow(running.url);
    const warm = Date.now() + 1_500;
    while (Date.now() < warm || trainers.acks.length < 10) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const masterPort = (await set.masterPort()) ?? set.nodes[0]!.port;
    // Stalled: the replicas are cut off for the last 300 ms before the kill.
    const resume = stall ? await stallReplicas(set, masterPort, 0.8) : undefined;
    if (stall) await new Promise((resolve) => setTimeout(resolve, 300));
    const killedAt = Date.now();
    await set.killNode(set.nodes.findIndex((node) => node.port === masterPort));
    await resume?.();
    await set.waitForFailover(masterPort, 20_000);
    const failedOverAt = Date.now();
    while (trainers.acks.filter((ack) => ack.sentAt > failedOverAt).length < 10) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await trainers.stop();
    const lost: Ack[] = [];
    for (const ack of trainers.acks) {
      const response = await fetch(`${running.url}/v1/rollouts/${ack.id}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      if (response.status === 404) lost.push(ack);
      else if (response.status !== 200) throw new Error(`status ${response.status}`);
      await response.arrayBuffer();
    }
    return {
      wait: replication.replicas,
      stalledReplicas: stall,
      accepted: trainers.acks.length,
      acceptedAfterFailover: trainers.acks.filter((ack) => ack.sentAt > failedOverAt).length,
      lost: lost.length,
      lostAckedMsBeforeKill: lost.map((ack) => killedAt - ack.at),
      failoverMs: failedOverAt - killedAt,
    };
  } finally {
    await stopCoordinator(running);
    await set.stop();
  }
}

interface CostResult {
  readonly wait: number;
  readonly enqueues: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** Closed-loop enqueues on `url` for `SECONDS`; latencies of the accepted ones. */
async function costRound(url: string): Promise<{ latencies: number[]; seconds: number }> {
  const latencies: number[] = [];
  const end = Date.now() + SECONDS * 1_000;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < end) {
        const t = performance.now();
        if ((await enqueue(url, randomUUID(), end + 5_000)) !== undefined) {
          latencies.push(performance.now() - t);
        }
      }
    }),
  );
  return { latencies, seconds: (performance.now() - start) / 1_000 };
}

async function cost(): Promise<CostResult[]> {
  const set = await startRedisSentinel({
    replicas: 2,
    downAfterMs: 1_000,
    failoverTimeoutMs: 3_000,
  });
  const policies = [WAIT_0, WAIT_1];
  const coordinators = await Promise.all(
    policies.map((policy, i) => startCoordinator(set, `bc${i}${randomUUID().slice(0, 6)}`, policy)),
  );
  try {
    const samples = policies.map(() => ({ latencies: [] as number[], seconds: 0 }));
    for (const running of coordinators) await costRound(running.url); // warm-up, untimed
    for (let round = 0; round < 2; round++) {
      for (const [i, running] of coordinators.entries()) {
        const got = await costRound(running.url);
        samples[i]!.latencies.push(...got.latencies);
        samples[i]!.seconds += got.seconds;
      }
    }
    return policies.map((policy, i) => ({
      wait: policy.replicas,
      enqueues: samples[i]!.latencies.length,
      perSecond: round(samples[i]!.latencies.length / samples[i]!.seconds, 1),
      p50Ms: round(percentile(samples[i]!.latencies, 50), 2),
      p99Ms: round(percentile(samples[i]!.latencies, 99), 2),
    }));
  } finally {
    await Promise.all(coordinators.map(stopCoordinator));
    await set.stop();
  }
}

const trials: TrialResult[] = [];
for (let t = 0; t < TRIALS; t++) {
  for (const [policy, stall] of [
    [WAIT_0, false],
    [WAIT_0, true],
    [WAIT_1, true],
  ] as const) {
    const result = await lossTrial(policy, stall);
    trials.push(result);
    console.log(JSON.stringify(result));
  }
}
const costs = await cost();
printTable(
  trials.map((t) => ({
    wait: t.wait,
    stalled: String(t.stalledReplicas),
    accepted: t.accepted,
    lost: t.lost,
    'lost acked ms before kill': t.lostAckedMsBeforeKill.join(' ') || '-',
    'failover ms': t.failoverMs,
  })),
);
printTable(costs.map((c) => ({ ...c })));
const [wait0, wait1] = costs;
const sum = (rows: TrialResult[]) => rows.reduce((n, t) => n + t.lost, 0);
const figures = {
  lossWindow: {
    wait0Healthy: {
      trials: trials.filter((t) => t.wait === 0 && !t.stalledReplicas).length,
      lost: sum(trials.filter((t) => t.wait === 0 && !t.stalledReplicas)),
    },
    wait0Stalled: {
      trials: trials.filter((t) => t.wait === 0 && t.stalledReplicas).length,
      lost: sum(trials.filter((t) => t.wait === 0 && t.stalledReplicas)),
      maxLostAckedMsBeforeKill: Math.max(
        0,
        ...trials.flatMap((t) => (t.wait === 0 ? t.lostAckedMsBeforeKill : [])),
      ),
    },
    wait1Stalled: {
      trials: trials.filter((t) => t.wait === 1).length,
      lost: sum(trials.filter((t) => t.wait === 1)),
    },
    failoverMsMedian: percentile(
      trials.map((t) => t.failoverMs),
      50,
    ),
  },
  cost: {
    wait0: wait0,
    wait1: wait1,
    throughputRatioWait1ToWait0: round(wait1!.perSecond / wait0!.perSecond, 3),
    p50RatioWait1ToWait0: round(wait1!.p50Ms / wait0!.p50Ms, 3),
    p99RatioWait1ToWait0: round(wait1!.p99Ms / wait0!.p99Ms, 3),
  },
};
console.log(JSON.stringify(figures, null, 2));
const file = writeResults('failover', {
  settings: {
    trials: TRIALS,
    seconds: SECONDS,
    concurrency: CONCURRENCY,
    wait1: WAIT_1,
    downAfterMs: 1_000,
    failoverTimeoutMs: 3_000,
    replicas: 2,
    sentinels: 3,
  },
  figures,
  trials,
  costs,
});
console.log(`wrote ${file}`);
