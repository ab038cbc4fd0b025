// Fleet limits are fleet facts for weight syncs too: a coordinator started with a raised
// FLOWFLEET_MAX_BLOB_BYTES publishes it, and a worker that was never told downloads a weights blob
// over the default limit instead of refusing it (it used to bound syncs by DEFAULT_LIMITS).
//
// Why the blob is not a valid weights set: the default maxBlobBytes is 256 MiB, and no valid
// wan21-mini component is anywhere near that (the codec refuses padding, trailing bytes and
// unknown tensors, and a header is bounded at 100 MB). So the blob is zeros just over the default:
// the worker must download all of it and pass its size and sha256 checks, and only then refuse it
// on content (`safetensors`). Under the defect the sync never gets that far: its announced size
// fails the sync schema, or the download is cut off at the default limit.
import { coordinatorKeys } from '@flowfleet/coordinator';
import { DEFAULT_LIMITS, SyncAckSchema, fleetKeys, publishedLimitsOf } from '@flowfleet/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../harness/redis-server.js';
import { startTestFleet, waitUntil } from './fleet-fixture.js';

let server: RedisServer;

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  await server?.stop();
});

describe('weight sync under a blob limit raised on the coordinator only', () => {
  it('a worker started without the override downloads a blob over the default limit', async () => {
    const maxBlobBytes = DEFAULT_LIMITS.maxBlobBytes + 1024 * 1024;
    const fleet = await startTestFleet(server.url, 'sync-limits', {
      limits: { ...DEFAULT_LIMITS, maxBlobBytes },
    });
    try {
      const published = publishedLimitsOf(
        await fleet.redis.hgetall(fleetKeys(fleet.prefix).limits),
      );
      expect(published.limits.maxBlobBytes).toBe(maxBlobBytes);
      // WorkerOptions has no limits: the worker can only learn them from the fleet.
      const worker = await fleet.startWorker();
      const sizeBytes = DEFAULT_LIMITS.maxBlobBytes + 1;
      await fleet.syncWeights('dit', 1, new Uint8Array(sizeBytes));
      const key = coordinatorKeys(fleet.prefix).acks('dit', 1);
      const ack = await waitUntil(
        async () => {
          const raw = await fleet.redis.hget(key, worker.workerId);
          return raw === null ? undefined : SyncAckSchema.parse(JSON.parse(raw));
        },
        'the worker to ack the sync',
        60_000,
      );
      expect(ack).toMatchObject({ status: 'refused', component: 'dit', version: 1 });
      // Size and sha256 passed: the whole blob arrived; only its content was refused.
      expect(ack.reason).toMatch(/not a valid safetensors file/);
      expect(worker.modelInstance().currentVersion('dit')).toBe(0);
    } finally {
      await fleet.close();
    }
  }, 120_000);
});
