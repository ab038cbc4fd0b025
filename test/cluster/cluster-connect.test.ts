// A cluster client's first connect against a seed that answers late: the seed process is stopped
// (SIGSTOP: the kernel still accepts connections, nothing answers) for longer than ioredis's
// default 1 s CLUSTER SLOTS timeout, as a seed busy with a whole fleet's reconnects is.
import { createRedis } from '@flowfleet/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisCluster } from '../harness/redis-cluster.js';
import { uniquePrefix } from '../harness/redis-server.js';

const STALL_MS = 2_500;
let cluster: RedisCluster;

beforeAll(async () => {
  // A node timeout well above the stall, so the other masters do not mark the seed failed.
  cluster = await startRedisCluster({ nodeTimeoutMs: 30_000 });
});

afterAll(async () => {
  await cluster?.stop();
});

describe('a cluster client', () => {
  it('connects through a seed whose slot map comes 2.5 s late', async () => {
    const seed = cluster.nodes[0]!;
    const redis = createRedis(seed.url, {
      mode: 'cluster',
      lazyConnect: true,
      maxRetriesPerRequest: null,
    });
    redis.on('error', () => undefined);
    const key = `{${uniquePrefix('late-seed')}}:k`;
    process.kill(seed.pid, 'SIGSTOP');
    let resumed = false;
    const resume = setTimeout(() => {
      resumed = true;
      process.kill(seed.pid, 'SIGCONT');
    }, STALL_MS);
    try {
      const connected = redis.connect().then(
        () => 'connected',
        (error: Error) => `failed: ${error.message}`,
      );
      expect(await connected).toBe('connected');
      expect(resumed).toBe(true);
      await redis.set(key, 'v');
      expect(await redis.get(key)).toBe('v');
    } finally {
      clearTimeout(resume);
      if (!resumed) process.kill(seed.pid, 'SIGCONT');
      redis.disconnect();
    }
  });
});
