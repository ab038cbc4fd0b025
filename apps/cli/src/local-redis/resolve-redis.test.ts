import { isFlowfleetError } from '@flowfleet/errors';
import { describe, expect, it } from 'vitest';
import { chooseRedisStarter, REDIS_STARTER_ENV } from './choose-redis.js';
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
    expect(redis).toMatchObject({ url: 'redis://10.0.0.1:6379', kind: 'external', port: 6379 });
    await expect(redis.stop()).resolves.toBeUndefined();
  });

  it('takes a Sentinel URL as given (its first sentinel as the address)', async () => {
    const url = 'redis://:pw@10.0.0.5:26380,10.0.0.6/ff-master';
    expect(await resolveRedis({ url })).toMatchObject({
      url,
      kind: 'external',
      host: '10.0.0.5',
      port: 26380,
    });
  });

  it('starts redis-server on a free port with AOF and noeviction, and stop() removes it', async () => {
    const redis = await resolveRedis({ starter: 'redis-server' });
    try {
      expect(redis.kind).toBe('redis-server');
      expect(await pingRedis(redis.host, redis.port)).toBe('+PONG');
      expect(isAlive(redis.pid!)).toBe(true);
    } finally {
      await redis.stop();
    }
    expect(isAlive(redis.pid!)).toBe(false);
  });

  it('kills and restarts a redis-server child on the same port', async () => {
    const redis = await resolveRedis({ starter: 'redis-server', appendonly: false });
    try {
      const first = redis.pid!;
      await redis.kill!();
      await expect(pingRedis(redis.host, redis.port)).rejects.toThrow();
      await redis.restart!();
      expect(redis.pid).not.toBe(first);
      expect(await pingRedis(redis.host, redis.port)).toBe('+PONG');
    } finally {
      await redis.stop();
    }
  });

  it('says how to install Redis when redis-server is missing and no container runtime answered', async () => {
    const error = await resolveRedis({
      starter: 'redis-server',
      command: 'flowfleet-no-such-redis-server',
    }).catch((e: unknown) => e);
    expect(isFlowfleetError(error, 'CLI_REDIS_UNAVAILABLE')).toBe(true);
    expect((error as Error).message).toMatch(/apt-get install redis-server/);
    expect((error as Error).message).toMatch(/Docker/);
  });
});

describe('chooseRedisStarter', () => {
  it('asks testcontainers, which finds no container engine on this machine, and picks redis-server', async () => {
    // No Docker engine here (DESIGN.md §8): the real probe must say so, quickly and honestly.
    const choice = await chooseRedisStarter({ env: {} });
    expect(choice.starter).toBe('redis-server');
    expect(choice.reason).toMatch(/no container runtime/);
    expect(choice.probeMs).toBeLessThan(5_000);
  });

  it('lets FLOWFLEET_REDIS_STARTER decide without probing, and refuses anything else', async () => {
    expect(await chooseRedisStarter({ env: { [REDIS_STARTER_ENV]: 'container' } })).toEqual({
      starter: 'container',
      reason: `${REDIS_STARTER_ENV}=container`,
      probeMs: 0,
    });
    const error = await chooseRedisStarter({ env: { [REDIS_STARTER_ENV]: 'docker' } }).catch(
      (e: unknown) => e,
    );
    expect(isFlowfleetError(error, 'CLI_USAGE')).toBe(true);
  });

  it('bounds the probe: a Docker host that never answers costs at most the timeout', async () => {
    // A listening socket that never speaks HTTP: the probe must give up at its bound.
    const { createServer } = await import('node:net');
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const saved = process.env['DOCKER_HOST'];
    process.env['DOCKER_HOST'] = `tcp://127.0.0.1:${port}`;
    try {
      const started = Date.now();
      const choice = await chooseRedisStarter({ env: {}, probeTimeoutMs: 1_000 });
      expect(choice.starter).toBe('redis-server');
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      if (saved === undefined) delete process.env['DOCKER_HOST'];
      else process.env['DOCKER_HOST'] = saved;
      silent.close();
    }
  });
});
