// A peer SIGKILLed mid-transfer (ADR 009): three worker processes form the coordinator's chain;
// the head is killed once it has verified its first range, while the others fetch through it.
// Its successor falls back (to the coordinator), names the dead peer in its ack, and every live
// worker ends on the new version holding exactly the uploaded bytes.
import { coordinatorKeys } from '@flowfleet/coordinator';
import type { SafetensorsTensor } from '@flowfleet/formats';
import { initWeights, WAN21_MINI } from '@flowfleet/models/wan21';
import { SyncAckSchema, type SyncAck } from '@flowfleet/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { peerServes, planOf } from '../worker/fanout-helpers.js';
import { startTestFleet, TOKENS, waitUntil, type TestFleet } from '../worker/fleet-fixture.js';
import { fileOf, spanOf, syncOk, upload } from '../worker/sync-helpers.js';
import { spawnWorker, STARTUP_TIMEOUT_MS, type ChildWorker } from './child-worker.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

function childEnv(fleet: TestFleet): Record<string, string> {
  return {
    REDIS_URL: fleet.redisUrl,
    FLOWFLEET_COORDINATOR_URL: fleet.url,
    FLOWFLEET_WORKER_TOKEN: TOKENS.worker,
    FLOWFLEET_PREFIX: fleet.prefix,
    FLOWFLEET_BACKEND: 'cpu',
    FLOWFLEET_PEER_HOST: '127.0.0.1',
    FLOWFLEET_PEER_PORT: '0',
    FLOWFLEET_DRAIN_TIMEOUT_MS: '2000',
  };
}

async function waitForHeartbeat(fleet: TestFleet, worker: ChildWorker): Promise<void> {
  const key = coordinatorKeys(fleet.prefix).heartbeat(worker.workerId);
  await waitUntil(
    async () => {
      if (worker.process.exitCode !== null) {
        throw new Error(`worker ${worker.workerId} exited:\n${worker.output()}`);
      }
      return (await fleet.redis.exists(key)) === 1 ? true : undefined;
    },
    `worker ${worker.workerId} to register`,
    STARTUP_TIMEOUT_MS,
  );
}

async function ackOf(fleet: TestFleet, workerId: string): Promise<SyncAck> {
  return waitUntil(
    async () => {
      const text = await fleet.redis.hget(coordinatorKeys(fleet.prefix).acks('dit', 1), workerId);
      return text === null ? undefined : SyncAckSchema.parse(JSON.parse(text));
    },
    `the ack of ${workerId}`,
    60_000,
  );
}

describe('a peer killed mid-transfer', () => {
  it('leaves its successors on the new version: they fall back and say so', async () => {
    // 1 MB/s out of the coordinator: the 2.6 MB dit takes seconds to leave it.
    const fleet = await startTestFleet(server.url, 'peer-kill', {
      egressBytesPerSecond: 1_000_000,
    });
    const children: ChildWorker[] = [];
    try {
      const tag = fleet.prefix.slice(-6);
      for (const name of ['k1', 'k2', 'k3']) {
        children.push(spawnWorker(`${name}-${tag}`, childEnv(fleet)));
      }
      for (const child of children) await waitForHeartbeat(fleet, child);
      const tensors = new Map<string, SafetensorsTensor>(
        [...initWeights(WAN21_MINI, 31, 'dit')].map(([name, t]) => [
          name,
          { dtype: 'F32', shape: t.dims, data: t.data as Float32Array },
        ]),
      );
      const file = fileOf(tensors);
      const sha256 = await upload(fleet, file);
      await syncOk(fleet, 'dit', { version: 1, sha256 });
      const plan = await planOf(fleet, 'dit', 1);
      expect(plan.chain.map((peer) => peer.workerId)).toEqual(children.map((c) => c.workerId));
      const [head, second, third] = children as [ChildWorker, ChildWorker, ChildWorker];

      // Mid-transfer: the head has verified the tensor at 40 % of the file (it serves it), not the
      // rest; its successor, one chunk behind it, has taken the ranges before that from it.
      const spans = [...tensors.keys()]
        .map((key) => spanOf(file, key))
        .sort((a, b) => a.begin - b.begin);
      const dataStart = spans[0]!.begin;
      const mid = spans.find((span) => span.begin >= file.byteLength * 0.4)!;
      await peerServes(plan.chain[0]!.peerUrl, sha256, mid.begin, mid.end);
      await head.stop('SIGKILL');
      expect(
        await fleet.redis.hexists(coordinatorKeys(fleet.prefix).acks('dit', 1), head.workerId),
      ).toBe(0);

      const secondAck = await ackOf(fleet, second.workerId);
      const thirdAck = await ackOf(fleet, third.workerId);
      for (const ack of [secondAck, thirdAck]) {
        expect(ack.status).toBe('ok');
        expect(ack.fetchedBytes).toBe(file.byteLength - dataStart);
        const total = Object.values(ack.sources ?? {}).reduce((a, b) => a + b, 0);
        expect(total).toBe(ack.fetchedBytes);
      }
      // The successor got part from the head before it died, then left it.
      expect(secondAck.sources?.[head.workerId]).toBeGreaterThan(0);
      expect(secondAck.sources?.['coordinator']).toBeGreaterThan(0);
      expect(secondAck.fallbacks?.[0]).toMatchObject({ from: head.workerId });
      expect(secondAck.fallbacks?.[0]?.code).toMatch(/^CLIENT_/);
      // What the live workers hold (and serve) is exactly the uploaded bytes.
      for (const [i, child] of [second, third].entries()) {
        const response = await fetch(`${plan.chain[i + 1]!.peerUrl}/v1/blobs/${sha256}`, {
          headers: {
            authorization: `Bearer ${TOKENS.worker}`,
            range: `bytes=${dataStart}-${file.byteLength - 1}`,
          },
        });
        expect(response.status, child.workerId).toBe(206);
        const served = Buffer.from(await response.arrayBuffer());
        expect(served.equals(Buffer.from(file.subarray(dataStart)))).toBe(true);
      }
    } finally {
      await Promise.all(children.map((child) => child.stop('SIGTERM')));
      await fleet.close();
    }
  }, 300_000);
});
