import { existsSync } from 'node:fs';
import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { pingRedis } from './ping-redis.js';
import { resolveRedis } from './resolve-redis.js';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('resolveRedis', () => {
  it('uses a given URL as is and never stops it', async () => {
    const redis = await resolveRedis({ url: 'redis://10.0.0.1:6379' });
    expect(redis).toMatchObject({ url: 'redis://10.0.0.1:6379', kind: 'external' });
    await expect(redis.stop()).resolves.toBeUndefined();
  });

  it('starts redis-server on a free port with AOF and noeviction, and stop() removes it', async () => {
    const redis = await resolveRedis();
    try {
      expect(redis.kind).toBe('redis-server');
      const { hostname, port } = new URL(redis.url);
      expect(await pingRedis(hostname, Number(port))).toBe('+PONG');
      expect(isAlive(redis.pid!)).toBe(true);
    } finally {
      await redis.stop();
    }
    expect(isAlive(redis.pid!)).toBe(false);
  });

  it('falls back to a container when redis-server is not installed', async () => {
    const redis = await resolveRedis({
      command: 'flowfleet-no-such-redis-server',
      startContainer: async () => ({
        url: 'redis://container:6379',
        kind: 'container',
        stop: async () => undefined,
      }),
    });
    expect(redis.kind).toBe('container');
  });

  it('says how to install Redis when neither redis-server nor testcontainers is there', async () => {
    expect(existsSync('node_modules/testcontainers')).toBe(false); // an optional peer, not installed here
    const error = await resolveRedis({ command: 'flowfleet-no-such-redis-server' }).catch(
      (e: unknown) => e,
    );
    expect(isFlowfleetError(error, 'CLI_REDIS_UNAVAILABLE')).toBe(true);
    expect((error as Error).message).toMatch(/apt-get install redis-server/);
    expect((error as Error).message).toMatch(/Docker/);
  });
});
