// Weight sync end to end through the coordinator: every worker fetches, verifies, stages and acks;
// the component's graphs are evicted; jobs run on the new version (and wait for the version they
// require); a bad blob is refused everywhere and changes nothing; a late worker catches up.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { coordinatorKeys } from '@flowfleet/coordinator';
import { readRolloutFile } from '@flowfleet/formats';
import { encodeWeights } from '@flowfleet/models';
import { initWeights, wan21MiniCard } from '@flowfleet/models/wan21';
import { SyncAckSchema, WorkerManifestSchema, type SyncStatus } from '@flowfleet/protocol';
import type { FlowfleetWorker } from '@flowfleet/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { startTestFleet, tinyRollout, waitUntil, type TestFleet } from './fleet-fixture.js';

let server: RedisServer;

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  await server?.stop();
});

function weightsBlob(component: 'dit' | 'text_encoder', seed: number): Uint8Array {
  return encodeWeights(initWeights(wan21MiniCard.config, seed, component));
}

async function acks(
  fleet: TestFleet,
  component: string,
  version: number,
): Promise<Record<string, SyncStatus>> {
  const raw = await fleet.redis.hgetall(coordinatorKeys(fleet.prefix).acks(component, version));
  return Object.fromEntries(
    Object.entries(raw).map(([id, json]) => [id, SyncAckSchema.parse(JSON.parse(json)).status]),
  );
}

/** Waits until every worker acked `version` (any status); returns the statuses. */
function acked(
  fleet: TestFleet,
  workers: readonly FlowfleetWorker[],
  component: string,
  version: number,
): Promise<Record<string, SyncStatus>> {
  return waitUntil(async () => {
    const all = await acks(fleet, component, version);
    return workers.every((w) => all[w.workerId] !== undefined) ? all : undefined;
  }, `acks of ${component} v${version}`);
}

function graphComponents(worker: FlowfleetWorker): string[][] {
  return worker
    .modelInstance()
    .capturer.graphs()
    .map((graph) => [...graph.components]);
}

async function latentsOf(fleet: TestFleet, body: Record<string, unknown>) {
  const { id } = await fleet.enqueue(body);
  const done = await fleet.waitForCompletion(id);
  return { summary: done.summary, result: readRolloutFile(await fleet.result(id)) };
}

describe('weight sync', () => {
  it('reaches every worker, evicts that component’s graphs, and new jobs run on it', async () => {
    const fleet = await startTestFleet(server.url, 'sync-e2e');
    try {
      const workers = [await fleet.startWorker(), await fleet.startWorker()];
      const body = tinyRollout();
      const before = await latentsOf(fleet, body);
      expect(before.summary?.weightsVersions).toEqual({ dit: 0, text_encoder: 0 });
      const ran = workers.find((w) => w.workerId === before.summary?.worker);
      expect(graphComponents(ran!)).toEqual(expect.arrayContaining([['dit'], ['text_encoder']]));

      await fleet.syncWeights('dit', 1, weightsBlob('dit', 7));
      expect(Object.values(await acked(fleet, workers, 'dit', 1))).toEqual(['ok', 'ok']);
      for (const worker of workers) {
        expect(worker.modelInstance().currentVersion('dit')).toBe(1);
        expect(worker.modelInstance().residentVersions('dit')).toEqual([1]);
        // Only the text encoder's graph survives a dit sync.
        expect(graphComponents(worker).every((c) => !c.includes('dit'))).toBe(true);
        const manifest = WorkerManifestSchema.parse(
          JSON.parse(
            (await fleet.redis.get(coordinatorKeys(fleet.prefix).worker(worker.workerId))) ?? '',
          ),
        );
        expect(manifest.weights).toEqual({ dit: 1, text_encoder: 0 });
      }
      expect(graphComponents(ran!)).toEqual([['text_encoder']]);
      const report = (await (await fleet.api('/v1/weights/dit')).json()) as {
        current: number;
        versions: Record<string, { status: string }>;
      };
      expect(report.current).toBe(1);
      expect(report.versions['1']?.status).toBe('loaded');

      const after = await latentsOf(fleet, body);
      expect(after.summary?.weightsVersions).toEqual({ dit: 1, text_encoder: 0 });
      expect(after.result.metadata.weightsVersions).toEqual({ dit: 1, text_encoder: 0 });
      expect(
        Buffer.from(after.result.latents.buffer).equals(Buffer.from(before.result.latents.buffer)),
      ).toBe(false);
    } finally {
      await fleet.close();
    }
  });

  it('syncs first when a job requires a version its worker missed', async () => {
    const fleet = await startTestFleet(server.url, 'sync-first');
    try {
      const worker = await fleet.startWorker({ rescanIntervalMs: 600_000 });
      // A sync whose broadcast the worker missed: recorded and streamed, never published.
      const bytes = weightsBlob('dit', 9);
      const upload = await fleet.api('/v1/blobs', {
        method: 'PUT',
        headers: { 'content-type': 'application/octet-stream' },
        body: bytes,
      });
      const { sha256, sizeBytes } = (await upload.json()) as { sha256: string; sizeBytes: number };
      const keys = coordinatorKeys(fleet.prefix);
      const sync = { component: 'dit', version: 1, sha256, sizeBytes };
      await fleet.redis
        .multi()
        .hset(
          keys.weights('dit'),
          'current',
          '1',
          'v:1',
          JSON.stringify({ sha256, sizeBytes, at: new Date().toISOString() }),
        )
        .sadd(keys.weightComponents, 'dit')
        .xadd(keys.syncStream, '*', 'sync', JSON.stringify(sync))
        .exec();
      expect(worker.stats().weights).toEqual({ dit: 0, text_encoder: 0 });
      const required = await latentsOf(fleet, tinyRollout({ weights: { dit: { min: 1 } } }));
      expect(required.summary?.weightsVersions.dit).toBe(1);
      expect(await acks(fleet, 'dit', 1)).toEqual({ [worker.workerId]: 'ok' });
      // The exact form works the same way, and a job without a requirement runs on what is held.
      expect(
        (await latentsOf(fleet, tinyRollout({ weights: { dit: { exact: 1 } } }))).summary
          ?.weightsVersions.dit,
      ).toBe(1);
      expect((await latentsOf(fleet, tinyRollout())).summary?.weightsVersions.dit).toBe(1);
    } finally {
      await fleet.close();
    }
  });

  it('refuses a bad blob on every worker and changes nothing; a late worker catches up past it', async () => {
    const fleet = await startTestFleet(server.url, 'sync-refuse');
    try {
      const workers = [await fleet.startWorker(), await fleet.startWorker()];
      await fleet.syncWeights('dit', 1, weightsBlob('dit', 7));
      await acked(fleet, workers, 'dit', 1);
      const body = tinyRollout();
      const good = await latentsOf(fleet, body);
      const graphsBefore = workers.map(graphComponents);

      // v2: a well-formed safetensors file with the wrong tensors (the text encoder's).
      await fleet.syncWeights('dit', 2, weightsBlob('text_encoder', 3));
      expect(Object.values(await acked(fleet, workers, 'dit', 2))).toEqual(['refused', 'refused']);
      for (const worker of workers) expect(worker.modelInstance().currentVersion('dit')).toBe(1);
      expect(workers.map(graphComponents)).toEqual(graphsBefore);
      const raw = await fleet.redis.hgetall(coordinatorKeys(fleet.prefix).acks('dit', 2));
      for (const json of Object.values(raw)) {
        expect(SyncAckSchema.parse(JSON.parse(json)).reason).toMatch(/weights do not match/);
      }
      const report = (await (await fleet.api('/v1/weights/dit')).json()) as {
        versions: Record<string, { status: string }>;
      };
      expect(report.versions['2']?.status).toBe('failed');
      const again = await latentsOf(fleet, body);
      expect(again.summary?.weightsVersions.dit).toBe(1);
      expect(
        Buffer.from(again.result.latents.buffer).equals(Buffer.from(good.result.latents.buffer)),
      ).toBe(true);

      // A worker started now catches up from the stream: past the refused versions to v1.
      const late = await fleet.startWorker();
      expect(late.stats().weights.dit).toBe(1);
      expect((await acks(fleet, 'dit', 2))[late.workerId]).toBe('refused');
      expect((await acks(fleet, 'dit', 1))[late.workerId]).toBe('ok');
    } finally {
      await fleet.close();
    }
  });

  it('refuses a blob whose stored bytes no longer match the sha256', async () => {
    const fleet = await startTestFleet(server.url, 'sync-corrupt');
    try {
      const workers = [await fleet.startWorker({ rescanIntervalMs: 600_000 })];
      const bytes = weightsBlob('dit', 8);
      const upload = await fleet.api('/v1/blobs', {
        method: 'PUT',
        headers: { 'content-type': 'application/octet-stream' },
        body: bytes,
      });
      const { sha256 } = (await upload.json()) as { sha256: string };
      const path = join(fleet.blobDir, 'sha256', sha256);
      const stored = await readFile(path);
      stored[stored.length - 1] = (stored[stored.length - 1] ?? 0) ^ 0xff;
      await writeFile(path, stored);
      const sync = await fleet.api('/v1/weights/dit/sync', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ version: 1, sha256 }),
      });
      expect(sync.status).toBe(202);
      expect(await acked(fleet, workers, 'dit', 1)).toEqual({ [workers[0]!.workerId]: 'refused' });
      const ack = SyncAckSchema.parse(
        JSON.parse(
          (await fleet.redis.hget(
            coordinatorKeys(fleet.prefix).acks('dit', 1),
            workers[0]!.workerId,
          )) ?? '',
        ),
      );
      expect(ack.reason).toMatch(/sha256/);
      expect(workers[0]!.stats().weights.dit).toBe(0);
      // A job that requires the refused version fails rather than running on older weights.
      const { id } = await fleet.enqueue(tinyRollout({ weights: { dit: { min: 1 } } }));
      const failed = await waitUntil(
        async () => {
          const status = await fleet.status(id);
          return status.status === 'failed' ? status : undefined;
        },
        'the job to fail',
        20_000,
      );
      expect(failed.error?.code).toBe('WORKER_WEIGHTS_UNAVAILABLE');
    } finally {
      await fleet.close();
    }
  });
});
