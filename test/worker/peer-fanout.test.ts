// Peer fan-out of weight syncs (ADR 009) on real workers, a real coordinator whose egress is
// capped (so a sync takes seconds and faults land mid-transfer) and real Redis: a chain moves
// the version link to link with the coordinator serving one copy; a hostile peer's bytes are
// never adopted; a coordinator restart, a worker joining mid-sync and a shard cut short on disk
// each end with every worker on the new version, or on its old one with the reason in its ack.
import { truncate } from 'node:fs/promises';
import { join } from 'node:path';
import type { SafetensorsTensor } from '@flowfleet/formats';
import { initWeights, WAN21_MINI } from '@flowfleet/models/wan21';
import type { TensorData } from '@flowfleet/platform';
import type { WeightReport } from '@flowfleet/protocol';
import type { FlowfleetWorker } from '@flowfleet/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { holdsExactly, peerServes, planOf, startHostilePeer } from './fanout-helpers.js';
import { startTestFleet, type TestFleet } from './fleet-fixture.js';
import { acksOf, fileOf, spanOf, syncOk, upload } from './sync-helpers.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

/** The coordinator's cap: the 2.6 MB wan21-mini dit takes ~2.6 s to leave it once. */
const COORDINATOR_EGRESS = 1_000_000;
const PEER = { host: '127.0.0.1', port: 0 } as const;

function f32(tensors: ReadonlyMap<string, TensorData>): Map<string, SafetensorsTensor> {
  return new Map(
    [...tensors].map(([name, t]) => [
      name,
      { dtype: 'F32', shape: t.dims, data: t.data as Float32Array },
    ]),
  );
}

async function startFleet(name: string): Promise<TestFleet> {
  return startTestFleet(server.url, name, { egressBytesPerSecond: COORDINATOR_EGRESS });
}

/** `count` workers with peer servers, in the order of their ids (the chain's order). */
async function startPeers(fleet: TestFleet, count: number): Promise<FlowfleetWorker[]> {
  const workers: FlowfleetWorker[] = [];
  for (let i = 0; i < count; i++) workers.push(await fleet.startWorker({ peer: PEER }));
  return workers.sort((a, b) => (a.workerId < b.workerId ? -1 : 1));
}

/** A version-1 dit file and what it holds. */
function checkpoint(seed: number): { file: Uint8Array; tensors: Map<string, SafetensorsTensor> } {
  const tensors = f32(initWeights(WAN21_MINI, seed, 'dit'));
  return { file: fileOf(tensors), tensors };
}

describe('peer fan-out', () => {
  it('moves a version down a chain: each link fetches from the one before, the coordinator serves one copy', async () => {
    const fleet = await startFleet('fanout-chain');
    try {
      const workers = await startPeers(fleet, 3);
      const { file, tensors } = checkpoint(21);
      const sha256 = await upload(fleet, file);
      await syncOk(fleet, 'dit', { version: 1, sha256 });
      const plan = await planOf(fleet, 'dit', 1);
      expect(plan.chain.map((peer) => peer.workerId)).toEqual(workers.map((w) => w.workerId));
      const acks = await acksOf(fleet, workers, 'dit', 1);
      for (const [i, worker] of workers.entries()) {
        const ack = acks[worker.workerId]!;
        expect(ack.status).toBe('ok');
        const from = i === 0 ? 'coordinator' : workers[i - 1]!.workerId;
        expect(ack.sources).toEqual({ [from]: ack.fetchedBytes });
        expect(ack.fallbackCount ?? 0).toBe(0);
        expect(worker.stats().weights.dit).toBe(1);
        expect(holdsExactly(worker, tensors)).toBe(true);
      }
      const report = (await (await fleet.api('/v1/weights/dit')).json()) as WeightReport;
      expect(report.versions['1']!.sources[workers[2]!.workerId]).toEqual({
        [workers[1]!.workerId]: acks[workers[2]!.workerId]!.fetchedBytes,
      });
    } finally {
      await fleet.close();
    }
  }, 60_000);

  it('never adopts a peer’s corrupted bytes: the worker falls back to the coordinator and says so', async () => {
    const fleet = await startFleet('fanout-hostile');
    try {
      const [worker] = await startPeers(fleet, 1);
      // Its id sorts first: the hostile peer heads the chain and the worker asks it first.
      const hostile = await startHostilePeer(fleet, worker!, 'a-hostile-peer');
      const { file, tensors } = checkpoint(22);
      const sha256 = await upload(fleet, file);
      await syncOk(fleet, 'dit', { version: 1, sha256 });
      const plan = await planOf(fleet, 'dit', 1);
      expect(plan.chain.map((peer) => peer.workerId)).toEqual([hostile.workerId, worker!.workerId]);
      const ack = (await acksOf(fleet, [worker!], 'dit', 1))[worker!.workerId]!;
      expect(ack.status).toBe('ok');
      expect(ack.sources).toEqual({
        coordinator: file.byteLength - spanOf(file, firstKey(file)).begin,
      });
      expect(ack.fallbackCount).toBe(1);
      expect(ack.fallbacks).toEqual([
        expect.objectContaining({ from: hostile.workerId, code: 'WORKER_PEER_CHUNK_INVALID' }),
      ]);
      expect(hostile.served()).toBe(1);
      expect(holdsExactly(worker!, tensors)).toBe(true);
      await hostile.close();
    } finally {
      await fleet.close();
    }
  }, 60_000);

  it('survives a coordinator restart mid-sync: every worker ends on the new version', async () => {
    const fleet = await startFleet('fanout-restart');
    try {
      const workers = await startPeers(fleet, 2);
      const { file, tensors } = checkpoint(23);
      const sha256 = await upload(fleet, file);
      await syncOk(fleet, 'dit', { version: 1, sha256 });
      const head = (await planOf(fleet, 'dit', 1)).chain[0]!;
      const first = spanOf(file, firstKey(file));
      await peerServes(head.peerUrl, sha256, first.begin, first.end);
      await fleet.stopCoordinator();
      await fleet.startCoordinator();
      const acks = await acksOf(fleet, workers, 'dit', 1);
      for (const worker of workers) {
        expect(acks[worker.workerId]!.status).toBe('ok');
        expect(holdsExactly(worker, tensors)).toBe(true);
      }
    } finally {
      await fleet.close();
    }
  }, 60_000);

  it('serves a worker that joins mid-sync from the coordinator, and the chain carries on', async () => {
    const fleet = await startFleet('fanout-join');
    try {
      const workers = await startPeers(fleet, 2);
      const { file, tensors } = checkpoint(24);
      const sha256 = await upload(fleet, file);
      await syncOk(fleet, 'dit', { version: 1, sha256 });
      const head = (await planOf(fleet, 'dit', 1)).chain[0]!;
      const first = spanOf(file, firstKey(file));
      await peerServes(head.peerUrl, sha256, first.begin, first.end);
      const joiner = await fleet.startWorker({ peer: PEER });
      const acks = await acksOf(fleet, [...workers, joiner], 'dit', 1);
      expect(Object.keys(acks[joiner.workerId]!.sources ?? {})).toEqual(['coordinator']);
      expect(acks[workers[1]!.workerId]!.sources).toEqual({
        [workers[0]!.workerId]: acks[workers[1]!.workerId]!.fetchedBytes,
      });
      for (const worker of [...workers, joiner]) {
        expect(acks[worker.workerId]!.status).toBe('ok');
        expect(holdsExactly(worker, tensors)).toBe(true);
      }
    } finally {
      await fleet.close();
    }
  }, 60_000);

  it('leaves every link on its old version when a shard is cut short on disk, the reason in each ack', async () => {
    const fleet = await startFleet('fanout-truncated');
    try {
      const workers = await startPeers(fleet, 3);
      const { file } = checkpoint(25);
      const sha256 = await upload(fleet, file);
      await truncate(join(fleet.blobDir, 'sha256', sha256), file.byteLength - 4096);
      await syncOk(fleet, 'dit', { version: 1, sha256 });
      const acks = await acksOf(fleet, workers, 'dit', 1);
      for (const worker of workers) {
        const ack = acks[worker.workerId]!;
        expect(ack).toMatchObject({ status: 'failed', code: 'API_RANGE_NOT_SATISFIABLE' });
        expect(ack.reason).toMatch(/are not inside the \d+ bytes of the object/);
        expect(worker.stats().weights.dit).toBe(0);
      }
    } finally {
      await fleet.close();
    }
  }, 90_000);
});

/** The key of the first tensor in the file's data section. */
function firstKey(file: Uint8Array): string {
  const header = JSON.parse(
    new TextDecoder().decode(
      file.subarray(
        8,
        8 + Number(new DataView(file.buffer, file.byteOffset).getBigUint64(0, true)),
      ),
    ),
  ) as Record<string, { data_offsets?: [number, number] }>;
  const [key] = Object.entries(header)
    .filter(([name, entry]) => name !== '__metadata__' && entry.data_offsets !== undefined)
    .sort(([, a], [, b]) => a.data_offsets![0] - b.data_offsets![0])[0]!;
  return key;
}
