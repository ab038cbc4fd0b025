// Real checkpoints through the fleet: a sharded BF16 checkpoint in diffusers' key names runs
// bit for bit like the same values synced as one F32 file in the card's names; a delta fetches
// only the changed tensors (a fresh worker fetches everything); a corrupted tensor, a truncated
// shard and a checkpoint with the wrong keys leave every worker on its version, the reason in
// its ack.
import { truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { coordinatorKeys } from '@flowfleet/coordinator';
import { initWeights, wan21MiniCard, WAN21_MINI } from '@flowfleet/models/wan21';
import type { SafetensorsTensor } from '@flowfleet/formats';
import type { TensorData } from '@flowfleet/platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { startTestFleet } from './fleet-fixture.js';
import {
  acksOf,
  bf16Pair,
  fileOf,
  postSync,
  rolloutOn,
  spanOf,
  syncOk,
  upload,
} from './sync-helpers.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

const dit = wan21MiniCard.components.find((c) => c.id === 'dit')!;
const diffusers = dit.checkpointKeys!.vocabularies.find((v) => v.name === 'diffusers')!;

function f32(tensors: ReadonlyMap<string, TensorData>): Map<string, SafetensorsTensor> {
  return new Map(
    [...tensors].map(([name, t]) => [
      name,
      { dtype: 'F32', shape: t.dims, data: t.data as Float32Array },
    ]),
  );
}

function tensorBytes(
  tensors: ReadonlyMap<string, SafetensorsTensor>,
  names?: readonly string[],
): number {
  return [...tensors]
    .filter(([name]) => names === undefined || names.includes(name))
    .reduce((total, [, t]) => total + t.data.byteLength, 0);
}

/** `tensors` with each of `names` perturbed (a stand-in for an optimiser step on a few tensors). */
function changed(
  tensors: ReadonlyMap<string, TensorData>,
  names: readonly string[],
): Map<string, TensorData> {
  const out = new Map(tensors);
  for (const name of names) {
    const t = tensors.get(name)!;
    const data = Float32Array.from(t.data as Float32Array, (v) => v * 0.5 + 0.01);
    out.set(name, { dtype: 'float32', dims: t.dims, data });
  }
  return out;
}

describe('checkpoint syncs', () => {
  it('runs a sharded BF16 diffusers checkpoint bit for bit like its F32 twin, then syncs deltas', async () => {
    const fleet = await startTestFleet(server.url, 'ckpt-sync');
    try {
      const worker = await fleet.startWorker();
      const { bf16, widened } = bf16Pair(initWeights(WAN21_MINI, 5, 'dit'));
      // v1: two shards, diffusers names under `transformer.`, BF16.
      const names = [...bf16.keys()];
      const half = (i: number) =>
        new Map(names.filter((_, j) => j % 2 === i).map((n) => [n, bf16.get(n)!]));
      const shards = await Promise.all(
        [0, 1].map((i) =>
          upload(
            fleet,
            fileOf(half(i), (n) => `transformer.${diffusers.keyOf(n)}`),
          ),
        ),
      );
      await syncOk(fleet, 'dit', { version: 1, shards: shards.map((sha256) => ({ sha256 })) });
      const v1 = (await acksOf(fleet, [worker], 'dit', 1))[worker.workerId]!;
      expect(v1).toMatchObject({ status: 'ok', fetchedBytes: tensorBytes(bf16), reusedTensors: 0 });
      const report = (await (await fleet.api('/v1/weights/dit')).json()) as {
        versions: Record<
          string,
          { kind: string; shards: number; fetchedBytes: Record<string, number> }
        >;
      };
      expect(report.versions['1']).toMatchObject({ kind: 'full', shards: 2 });
      expect(report.versions['1']?.fetchedBytes[worker.workerId]).toBe(tensorBytes(bf16));

      const onV1 = await rolloutOn(fleet, 1);

      // v2: the widened values as one F32 file in the card's names: the same rollout, bit for bit.
      await fleet.syncWeights('dit', 2, fileOf(f32(widened)));
      expect((await acksOf(fleet, [worker], 'dit', 2))[worker.workerId]?.status).toBe('ok');
      const onV2 = await rolloutOn(fleet, 2);
      expect(onV2.equals(onV1)).toBe(true);

      // v3: two tensors changed; the worker fetches only those.
      const delta = ['blocks.0.self_attn.q.weight', 'head.head.bias'];
      const v3tensors = changed(widened, delta);
      await fleet.syncWeights('dit', 3, fileOf(f32(v3tensors)));
      const v3 = (await acksOf(fleet, [worker], 'dit', 3))[worker.workerId]!;
      expect(v3).toMatchObject({
        status: 'ok',
        fetchedBytes: tensorBytes(f32(v3tensors), delta),
        reusedTensors: names.length - 2,
      });
      const onV3 = await rolloutOn(fleet, 3);
      expect(onV3.equals(onV2)).toBe(false);
      // A worker that holds nothing of it fetches everything, and runs it the same.
      const fresh = await fleet.startWorker();
      const fresh3 = (await acksOf(fleet, [fresh], 'dit', 3))[fresh.workerId]!;
      expect(fresh3).toMatchObject({
        status: 'ok',
        fetchedBytes: tensorBytes(f32(v3tensors)),
        reusedTensors: 0,
      });
      await worker.close();
      expect((await rolloutOn(fleet, 3)).equals(onV3)).toBe(true);

      // v4: a delta whose changed tensor's stored bytes were corrupted after the upload.
      const v4tensors = changed(v3tensors, ['blocks.1.ffn.0.weight']);
      const v4file = fileOf(f32(v4tensors));
      const sha4 = await upload(fleet, v4file);
      const stored = Buffer.from(v4file);
      const { begin } = spanOf(v4file, 'blocks.1.ffn.0.weight');
      stored[begin + 3] = (stored[begin + 3] ?? 0) ^ 0x40;
      await writeFile(join(fleet.blobDir, 'sha256', sha4), stored);
      await syncOk(fleet, 'dit', { version: 4, sha256: sha4 });
      const v4 = (await acksOf(fleet, [fresh], 'dit', 4))[fresh.workerId]!;
      expect(v4).toMatchObject({ status: 'refused', code: 'WORKER_BLOB_REFUSED' });
      expect(v4.reason).toMatch(/tensor blocks\.1\.ffn\.0\.weight: sha256 .* does not match/);
      expect(fresh.stats().weights.dit).toBe(3);
      expect((await rolloutOn(fleet, 3)).equals(onV3)).toBe(true);
    } finally {
      await fleet.close();
    }
  });

  it('refuses a truncated shard at the edge, and a shard cut short on disk in the ack', async () => {
    const fleet = await startTestFleet(server.url, 'ckpt-truncated');
    try {
      const worker = await fleet.startWorker();
      const tensors = f32(initWeights(WAN21_MINI, 6, 'dit'));
      const names = [...tensors.keys()];
      const files = [0, 1].map((i) =>
        fileOf(new Map(names.filter((_, j) => j % 2 === i).map((n) => [n, tensors.get(n)!]))),
      );
      const good = await upload(fleet, files[0]!);
      const cut = await upload(fleet, files[1]!.subarray(0, files[1]!.length - 10));
      const refused = await postSync(fleet, 'dit', {
        version: 1,
        shards: [{ sha256: good }, { sha256: cut }],
      });
      expect(refused.status).toBe(400);
      expect(refused.json).toMatchObject({
        code: 'FMT_SAFETENSORS_INVALID',
        details: { reason: 'truncated' },
      });
      const hash = await fleet.redis.hgetall(coordinatorKeys(fleet.prefix).weights('dit'));
      expect(hash).toEqual({});

      // Whole at upload, cut short on disk after the sync: the worker's ranges fail; it stays.
      const second = await upload(fleet, files[1]!);
      await truncate(join(fleet.blobDir, 'sha256', second), files[1]!.length - 4096);
      await syncOk(fleet, 'dit', { version: 1, shards: [{ sha256: good }, { sha256: second }] });
      const ack = (await acksOf(fleet, [worker], 'dit', 1))[worker.workerId]!;
      expect(ack).toMatchObject({ status: 'failed', code: 'API_RANGE_NOT_SATISFIABLE' });
      expect(worker.stats().weights.dit).toBe(0);

      // A checkpoint with a missing, an unexpected and a misshapen tensor: one coded refusal.
      const wrong = new Map(tensors);
      wrong.delete('head.head.bias');
      wrong.set('blocks.9.extra', { dtype: 'F32', shape: [1], data: Float32Array.of(1) });
      wrong.set('blocks.0.ffn.0.bias', {
        dtype: 'F32',
        shape: [3],
        data: Float32Array.of(1, 2, 3),
      });
      await fleet.syncWeights('dit', 2, fileOf(wrong));
      const mismatch = (await acksOf(fleet, [worker], 'dit', 2))[worker.workerId]!;
      expect(mismatch).toMatchObject({ status: 'refused', code: 'MODEL_WEIGHTS_MISMATCH' });
      expect(mismatch.reason).toMatch(
        /missing: head\.head\.bias; unexpected: blocks\.9\.extra; wrong shape: blocks\.0\.ffn\.0\.bias/,
      );
      expect(worker.stats().weights.dit).toBe(0);
    } finally {
      await fleet.close();
    }
  });
});
