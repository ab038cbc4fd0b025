import { fleetKeys, manifestDigestOf, WorkerHeartbeatSchema } from '@flowfleet/protocol';
import { WorkerRegistration } from '@flowfleet/worker';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeManifest } from '../coordinator/fixture.js';
import { startRedisServer, uniquePrefix, type RedisServer } from '../harness/redis-server.js';

let server: RedisServer;
let redis: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis(server.url, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

describe('WorkerRegistration', () => {
  it('beats with the digest of the manifest text in Redis, before and after a rewrite', async () => {
    const keys = fleetKeys(uniquePrefix('registration-digest'));
    let manifest = fakeManifest('w1', { weights: { dit: 0 } });
    const registration = new WorkerRegistration({
      redis,
      keys,
      workerId: 'w1',
      heartbeatTtlMs: 60_000,
      manifest: () => manifest,
      load: () => ({ activeJobs: 0, lanes: [] }),
      logger: pino({ level: 'silent' }),
    });
    const digests = async () => {
      const beat = WorkerHeartbeatSchema.parse(
        JSON.parse((await redis.get(keys.heartbeat('w1')))!),
      );
      return {
        beat: beat.manifestDigest,
        stored: manifestDigestOf((await redis.get(keys.worker('w1')))!),
      };
    };
    try {
      await registration.start();
      const first = await digests();
      expect(first.beat).toBe(first.stored);

      manifest = fakeManifest('w1', { weights: { dit: 1 } });
      await registration.refreshManifest();
      await registration.beat();
      const second = await digests();
      expect(second.beat).toBe(second.stored);
      expect(second.beat).not.toBe(first.beat);
    } finally {
      await registration.close();
    }
  });
});
