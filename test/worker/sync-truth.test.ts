// What the weight-sync path tells a trainer must be true (issue 22, items 1, 3 and 5): a version
// every worker refuses never becomes `current`, and the edge refuses a requirement no live worker
// can serve (409 API_WEIGHT_VERSION_UNAVAILABLE) instead of a 202 whose job fails seconds later;
// non-finite weights are refused with a coded ack and the worker keeps its version; the report
// shows each worker's ack code and which versions no worker holds any more; a sync is one hash
// the worker reads in one round trip, and a record without a manifest (the old whole-blob form)
// is refused rather than fetched whole.
import { readFile } from 'node:fs/promises';
import { coordinatorKeys } from '@flowfleet/coordinator';
import { readSafetensors, type SafetensorsTensor } from '@flowfleet/formats';
import { encodeWeights } from '@flowfleet/models';
import { initWeights, WAN21_MINI } from '@flowfleet/models/wan21';
import type { TensorData } from '@flowfleet/platform';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { startTestFleet, tinyRollout, waitUntil, type TestFleet } from './fleet-fixture.js';
import { acksOf, fileOf, postSync, syncOk, upload } from './sync-helpers.js';

const FIXTURE = new URL('../fixtures/peft-wan21-mini/', import.meta.url);

let server: RedisServer;
let adapterFile: Uint8Array;
let config: Record<string, unknown>;
beforeAll(async () => {
  server = await startRedisServer();
  adapterFile = await readFile(new URL('adapter_model.safetensors', FIXTURE));
  config = JSON.parse(await readFile(new URL('adapter_config.json', FIXTURE), 'utf8')) as Record<
    string,
    unknown
  >;
});
afterAll(async () => {
  await server?.stop();
});

function ditFile(seed: number, poison?: (tensors: Map<string, TensorData>) => void): Uint8Array {
  const tensors = initWeights(WAN21_MINI, seed, 'dit');
  poison?.(tensors);
  return encodeWeights(tensors);
}

/** Sets element 3 of the first 2-D tensor to `value`. */
function poisonWith(value: number): (tensors: Map<string, TensorData>) => void {
  return (tensors) => {
    const [, tensor] = [...tensors].find(([, t]) => t.dims.length === 2)!;
    (tensor.data as Float32Array)[3] = value;
  };
}

interface Report {
  current: number | null;
  latest: { version: number; status: string } | null;
  versions: Record<
    string,
    {
      status: string;
      acks: Record<string, string>;
      codes: Record<string, string>;
      holders: string[];
    }
  >;
}

async function report(fleet: TestFleet): Promise<Report> {
  return (await (await fleet.api('/v1/weights/dit')).json()) as Report;
}

async function enqueueAnswer(
  fleet: TestFleet,
  weights: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<{ status: number; json: { code?: string; id?: string } }> {
  const response = await fleet.api('/v1/rollouts', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(tinyRollout({ weights, ...extra })),
  });
  return { status: response.status, json: (await response.json()) as { code?: string } };
}

describe('what a trainer is told about weight versions', () => {
  it('never makes a version every worker refused current, and refuses requirements on it at the edge', async () => {
    const fleet = await startTestFleet(server.url, 'truth-refused');
    try {
      const workers = [await fleet.startWorker(), await fleet.startWorker()];
      await fleet.syncWeights('dit', 1, ditFile(1));
      await acksOf(fleet, workers, 'dit', 1);
      // v2: a well-formed file of the wrong tensors (the text encoder's), refused everywhere.
      await fleet.syncWeights('dit', 2, encodeWeights(initWeights(WAN21_MINI, 2, 'text_encoder')));
      await acksOf(fleet, workers, 'dit', 2);
      const body = await report(fleet);
      expect(body.current).toBe(1);
      expect(body.latest).toEqual({ version: 2, status: 'failed' });
      const codes = Object.fromEntries(workers.map((w) => [w.workerId, 'MODEL_WEIGHTS_MISMATCH']));
      expect(body.versions['2']).toMatchObject({ status: 'failed', codes, holders: [] });
      expect(body.versions['1']).toMatchObject({ status: 'loaded' });
      expect(body.versions['1']?.holders.sort()).toEqual(workers.map((w) => w.workerId).sort());

      // What the example trainer and the Python quick start send, on the refused version: 409.
      for (const requirement of [{ exact: 2 }, { min: 2 }]) {
        const answer = await enqueueAnswer(fleet, { dit: requirement });
        expect(answer.status).toBe(409);
        expect(answer.json.code).toBe('API_WEIGHT_VERSION_UNAVAILABLE');
      }
      // On-policy means the newest version a live worker serves: v1, and the job runs there.
      const onPolicy = await enqueueAnswer(fleet, { dit: { maxStaleness: 0 } });
      expect(onPolicy.status).toBe(202);
      const done = await fleet.waitForCompletion(onPolicy.json.id!);
      expect(done.summary?.weightsVersions.dit).toBe(1);
      // With no live worker a refused version is not held for capacity either.
      await Promise.all(workers.map((worker) => worker.close()));
      const held = await enqueueAnswer(fleet, { dit: { exact: 2 } }, { waitForCapacity: true });
      expect(held.status).toBe(409);
      expect(held.json.code).toBe('API_WEIGHT_VERSION_UNAVAILABLE');
    } finally {
      await fleet.close();
    }
  });

  it('refuses a pinned version the live workers moved past, and reports it as held by nobody', async () => {
    const fleet = await startTestFleet(server.url, 'truth-moved-past');
    try {
      const worker = await fleet.startWorker();
      await fleet.syncWeights('dit', 1, ditFile(1));
      await acksOf(fleet, [worker], 'dit', 1);
      await fleet.syncWeights('dit', 2, ditFile(2));
      await acksOf(fleet, [worker], 'dit', 2);
      const answer = await enqueueAnswer(fleet, { dit: { exact: 1 } });
      expect(answer.status).toBe(409);
      expect(answer.json.code).toBe('API_WEIGHT_VERSION_UNAVAILABLE');
      const body = await report(fleet);
      expect(body.current).toBe(2);
      expect(body.latest).toEqual({ version: 2, status: 'loaded' });
      expect(body.versions['1']).toMatchObject({ status: 'retired', holders: [] });
      expect(body.versions['2']).toMatchObject({ status: 'loaded', holders: [worker.workerId] });
      expect((await enqueueAnswer(fleet, { dit: { exact: 2 } })).status).toBe(202);
    } finally {
      await fleet.close();
    }
  });

  it('refuses non-finite weights and absurd LoRA alphas with a coded ack, keeping the held version', async () => {
    const fleet = await startTestFleet(server.url, 'truth-non-finite');
    try {
      const worker = await fleet.startWorker();
      await fleet.syncWeights('dit', 1, ditFile(1));
      await acksOf(fleet, [worker], 'dit', 1);
      let version = 1;
      const refusedWith = async (body: Record<string, unknown>, code: string): Promise<void> => {
        version += 1;
        await syncOk(fleet, 'dit', { version, ...body });
        const ack = (await acksOf(fleet, [worker], 'dit', version))[worker.workerId]!;
        expect.soft({ version, status: ack.status, code: ack.code }).toEqual({
          version,
          status: 'refused',
          code,
        });
        expect.soft(worker.stats().weights.dit).toBe(1);
      };
      for (const value of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
        const sha256 = await upload(fleet, ditFile(2, poisonWith(value)));
        await refusedWith({ sha256 }, 'WORKER_WEIGHTS_NOT_FINITE');
      }
      const adapter = readSafetensors(adapterFile, { copy: true }).tensors;
      // NaN in one lora_B matrix (BF16 0x7fc0).
      const nanB = new Map(adapter);
      const [bKey, b] = [...adapter].find(([key]) => key.endsWith('lora_B.weight'))!;
      const bits = Uint16Array.from(b.data as Uint16Array);
      bits[1] = 0x7fc0;
      nanB.set(bKey, { dtype: 'BF16', shape: b.shape, data: bits });
      const lora = { base: 1, config };
      await refusedWith(
        { sha256: await upload(fleet, fileOf(nanB)), lora },
        'WORKER_WEIGHTS_NOT_FINITE',
      );
      // A per-module `.alpha` scalar (ComfyUI / kohya files) of −1e38: finite, and absurd.
      const withAlpha = new Map<string, SafetensorsTensor>(adapter);
      for (const key of adapter.keys()) {
        if (!key.endsWith('.lora_A.weight')) continue;
        const alphaKey = key.replace('.lora_A.weight', '.alpha');
        withAlpha.set(alphaKey, { dtype: 'F32', shape: [], data: Float32Array.from([-1e38]) });
      }
      await refusedWith(
        { sha256: await upload(fleet, fileOf(withAlpha)), lora },
        'MODEL_LORA_INVALID',
      );
      // In the config the edge can tell: refused before anything is recorded, 0 (a no-op) too.
      const sha256 = await upload(fleet, adapterFile);
      for (const alpha of [-1e38, 0]) {
        const answer = await postSync(fleet, 'dit', {
          version: version + 1,
          sha256,
          lora: { base: 1, config: { ...config, lora_alpha: alpha } },
        });
        expect.soft(answer.status).toBe(400);
        expect.soft(answer.json.code).toBe('MODEL_LORA_INVALID');
      }
      // The worker still loads what is sound.
      await fleet.syncWeights('dit', version + 1, ditFile(3));
      expect((await acksOf(fleet, [worker], 'dit', version + 1))[worker.workerId]?.status).toBe(
        'ok',
      );
    } finally {
      await fleet.close();
    }
  });

  it('refuses a record without a manifest (no whole-blob fetch) with a coded ack', async () => {
    const fleet = await startTestFleet(server.url, 'truth-legacy-record');
    try {
      const worker = await fleet.startWorker({ rescanIntervalMs: 600_000 });
      const bytes = ditFile(9);
      const sha256 = await upload(fleet, bytes);
      const keys = coordinatorKeys(fleet.prefix);
      // The record form from before manifests; the sync message is a trigger only.
      const record = { sha256, sizeBytes: bytes.length, at: new Date().toISOString() };
      const sync = { component: 'dit', version: 1, sha256, sizeBytes: bytes.length };
      await fleet.redis.hset(
        keys.weights('dit'),
        'latest',
        '1',
        'current',
        '1',
        'v:1',
        JSON.stringify(record),
      );
      await fleet.redis.publish(keys.syncChannel, JSON.stringify(sync));
      const ack = (await acksOf(fleet, [worker], 'dit', 1))[worker.workerId]!;
      expect(ack).toMatchObject({ status: 'refused', code: 'WORKER_BLOB_REFUSED' });
      expect(worker.stats().weights.dit).toBe(0);
    } finally {
      await fleet.close();
    }
  });

  it('writes a sync into one hash that a worker reads in one round trip before its first byte', async () => {
    const fleet = await startTestFleet(server.url, 'truth-one-read');
    const monitor = new Redis(server.url);
    try {
      const worker = await fleet.startWorker({ rescanIntervalMs: 600_000 });
      const names = await fleet.redis.client('LIST');
      const address = String(names)
        .split('\n')
        .find((line) => line.includes(`name=flowfleet-worker:${worker.workerId}:main`))
        ?.match(/ addr=(\S+)/)?.[1];
      expect(address).toBeDefined();
      const before = new Set(await fleet.redis.keys(`{${fleet.prefix}}*`));
      const commands: string[] = [];
      const stream = await monitor.monitor();
      stream.on('monitor', (_time: string, args: string[], source: string) => {
        if (source.endsWith(address!)) commands.push(args.join(' '));
      });
      await fleet.syncWeights('dit', 1, ditFile(1));
      await acksOf(fleet, [worker], 'dit', 1);
      await waitUntil(
        () => (commands.some((c) => /^hset .*acks/i.test(c)) ? true : undefined),
        'the ack',
      );
      stream.disconnect();
      // Commands on the sync state's keys (a manifest write names `weights` in its value).
      const syncState = commands.filter((c) =>
        /:(weights|fanout|sync|acks)\b/.test(c.split(' ')[1] ?? ''),
      );
      expect(syncState.map((c) => c.split(' ').slice(0, 2).join(' '))).toEqual([
        `hgetall {${fleet.prefix}}:weights:dit`,
        `hset {${fleet.prefix}}:acks:dit:1`,
      ]);
      const added = (await fleet.redis.keys(`{${fleet.prefix}}*`)).filter((k) => !before.has(k));
      expect(added.sort()).toEqual(
        [
          `{${fleet.prefix}}:acks:dit:1`,
          `{${fleet.prefix}}:weight-components`,
          `{${fleet.prefix}}:weights:dit`,
        ].sort(),
      );
    } finally {
      monitor.disconnect();
      await fleet.close();
    }
  });

  it('brings a worker that missed a sync to the version a job requires before the job starts', async () => {
    // The version is recorded by a sibling coordinator on the same blob store and copied here:
    // this fleet's worker never heard of it until the job named it.
    const fleet = await startTestFleet(server.url, 'truth-missed');
    const sibling = await startTestFleet(server.url, 'truth-missed-sibling', {
      blobDir: fleet.blobDir,
    });
    try {
      const worker = await fleet.startWorker({ rescanIntervalMs: 600_000 });
      await sibling.syncWeights('dit', 1, ditFile(4));
      const fields = await sibling.redis.hgetall(coordinatorKeys(sibling.prefix).weights('dit'));
      await fleet.redis.hset(coordinatorKeys(fleet.prefix).weights('dit'), fields);
      expect(worker.stats().weights.dit).toBe(0);
      const { id } = await fleet.enqueue(tinyRollout({ weights: { dit: { min: 1 } } }));
      const done = await fleet.waitForCompletion(id);
      expect(done.summary?.weightsVersions.dit).toBe(1);
      expect((await acksOf(fleet, [worker], 'dit', 1))[worker.workerId]?.status).toBe('ok');
      // The exact form is met the same way, and a job without a requirement runs on what is held.
      for (const weights of [{ dit: { exact: 1 } }, undefined]) {
        const job = await fleet.enqueue(tinyRollout(weights === undefined ? {} : { weights }));
        expect((await fleet.waitForCompletion(job.id)).summary?.weightsVersions.dit).toBe(1);
      }
    } finally {
      await fleet.close();
      await sibling.close();
    }
  });
});
