// Worker lifecycle edges that need no fleet: an unreachable Redis, a start-up failing midway,
// and close() racing start().
import { isFlowfleetError } from '@flowfleet/errors';
import { createWorker } from '@flowfleet/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startRedisServer, type RedisServer } from '../harness/redis-server.js';

let server: RedisServer;

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  await server?.stop();
});

describe('worker lifecycle', () => {
  it('fails start-up with a coded error when Redis is unreachable, and closes cleanly', async () => {
    const worker = createWorker({
      redisUrl: `redis://127.0.0.1:${await freePort()}`,
      coordinatorUrl: 'http://127.0.0.1:9',
      workerId: 'unreachable',
      backend: 'cpu',
    });
    let error: unknown;
    try {
      await worker.start();
    } catch (caught) {
      error = caught;
    }
    expect(isFlowfleetError(error, 'WORKER_REDIS_UNAVAILABLE')).toBe(true);
    await worker.close();
    await worker.close(); // idempotent
    await expect(worker.start()).rejects.toThrow(/runs once/);
  });

  it('closes what a start-up started when a later phase fails', async () => {
    const prefix = `t-lifecycle-midway-${process.pid}`;
    const worker = createWorker({
      redisUrl: server.url,
      coordinatorUrl: 'http://127.0.0.1:9',
      workerId: 'midway',
      prefix,
      backend: 'cpu',
      // Redis and the compute pool come up; loading the models fails.
      models: ['no-such-model'],
    });
    let error: unknown;
    try {
      await worker.start();
    } catch (caught) {
      error = caught;
    }
    expect(isFlowfleetError(error, 'MODEL_UNKNOWN_CARD')).toBe(true);
    const { Redis } = await import('ioredis');
    const redis = new Redis(server.url);
    try {
      // Every connection it opened is gone (they carry the worker id in their names).
      const deadline = Date.now() + 10_000;
      let clients = '';
      do {
        clients = String(await redis.call('CLIENT', 'LIST'));
        if (!clients.includes('flowfleet-worker:midway:')) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      } while (Date.now() < deadline);
      expect(clients).not.toContain('flowfleet-worker:midway:');
      expect(await redis.keys(`{${prefix}}*`)).toEqual([]);
    } finally {
      redis.disconnect();
    }
    await worker.close(); // idempotent
  });

  it('stops a start-up that close() overtakes, leaving no registration behind', async () => {
    const prefix = `t-lifecycle-${process.pid}`;
    const worker = createWorker({
      redisUrl: server.url,
      coordinatorUrl: 'http://127.0.0.1:9',
      workerId: 'overtaken',
      prefix,
      backend: 'cpu',
    });
    const starting = worker.start();
    const closing = worker.close();
    await expect(starting).rejects.toThrow(/closed during start-up/);
    await closing;
    // It stopped before building models, let alone registering.
    expect(() => worker.modelInstance()).toThrow(/not started/);
    const { Redis } = await import('ioredis');
    const redis = new Redis(server.url);
    try {
      expect(await redis.keys(`{${prefix}}:heartbeat:*`)).toEqual([]);
      const leftovers = await redis.keys(`{${prefix}}*`);
      if (leftovers.length > 0) await redis.del(...leftovers);
    } finally {
      redis.disconnect();
    }
  });
});
