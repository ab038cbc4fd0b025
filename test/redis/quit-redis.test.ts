// quitRedis (@flowfleet/redis) against a real redis-server: a ready connection ends after QUIT, one
// that never connected or keeps reconnecting is stopped at once, a QUIT the server does not
// answer is cut after the timeout, and a second call is a no-op.
import { once } from 'node:events';
import { createRedis, quitRedis } from '@flowfleet/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startRedisServer, type RedisServer } from '../harness/redis-server.js';

let server: RedisServer;

beforeAll(async () => {
  server = await startRedisServer({ starter: 'redis-server' });
});

afterAll(async () => {
  await server?.stop();
});

describe('quitRedis', () => {
  it('QUITs a ready connection: the server sees it leave; a second call is a no-op', async () => {
    const admin = createRedis(server.url);
    const redis = createRedis(server.url, { connectionName: 'quit-me' });
    try {
      await redis.ping();
      const listed = async (): Promise<boolean> =>
        ((await admin.client('LIST')) as string).includes('name=quit-me');
      expect(await listed()).toBe(true);
      await quitRedis(redis);
      expect(redis.status).toBe('end');
      expect(await listed()).toBe(false);
      await quitRedis(redis);
      expect(redis.status).toBe('end');
    } finally {
      admin.disconnect();
    }
  });

  it('stops a connection that never reached a server instead of waiting for it', async () => {
    const nowhere = createRedis(`redis://127.0.0.1:${await freePort()}`, {
      retryStrategy: () => 50,
    });
    const started = performance.now();
    const ended = once(nowhere, 'end');
    await quitRedis(nowhere);
    await ended; // no reconnect attempt follows: 'end' is final
    expect(nowhere.status).toBe('end');
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('drops a connection whose QUIT the server does not answer within the timeout', async () => {
    const redis = createRedis(server.url, { maxRetriesPerRequest: null });
    const admin = createRedis(server.url);
    try {
      await redis.ping();
      // The server holds every client's commands, QUIT included, for 1.5 s.
      await admin.call('CLIENT', 'PAUSE', '1500', 'ALL');
      const started = performance.now();
      await quitRedis(redis, 200);
      expect(redis.status).toBe('end');
      expect(performance.now() - started).toBeLessThan(1_400);
    } finally {
      admin.disconnect();
    }
  });
});
