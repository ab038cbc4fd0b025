import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { sendCommand } from './resp.js';
import { startRedisServer, uniquePrefix, type RedisServer } from './redis-server.js';

const servers: RedisServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.stop()));
});

async function start(options: Parameters<typeof startRedisServer>[0] = {}): Promise<RedisServer> {
  const server = await startRedisServer(options);
  servers.push(server);
  return server;
}

describe('startRedisServer', () => {
  it('starts on a free port (never 6379) and answers PING over raw TCP', async () => {
    const server = await start();
    expect(server.port).not.toBe(6379);
    expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
    expect(await sendCommand(server, ['PING'])).toBe('PONG');
    expect(await sendCommand(server, ['CONFIG', 'GET', 'maxmemory-policy'])).toEqual([
      'maxmemory-policy',
      'noeviction',
    ]);
    expect(await sendCommand(server, ['CONFIG', 'GET', 'save'])).toEqual(['save', '']);
  });

  it('keeps a key across kill -9 and restart when appendonly is on', async () => {
    const server = await start({ appendonly: true, starter: 'redis-server' });
    const key = `${uniquePrefix('aof')}:k`;
    expect(await sendCommand(server, ['SET', key, 'v'])).toBe('OK');
    const firstPid = server.pid;

    await server.kill('SIGKILL');
    await expect(sendCommand(server, ['PING'], 500)).rejects.toThrow();

    await server.restart();
    expect(server.pid).not.toBe(firstPid);
    expect(await sendCommand(server, ['GET', key])).toBe('v');
  });

  it('stops idempotently and removes its own temp dir', async () => {
    const server = await start();
    expect(existsSync(server.dir)).toBe(true);
    await Promise.all([server.stop(), server.stop()]);
    await server.stop();
    expect(existsSync(server.dir)).toBe(false);
    await expect(sendCommand(server, ['PING'], 500)).rejects.toThrow();
    await expect(server.restart()).rejects.toThrow(/after stop/);
  });

  it('says how to install redis-server when it is not on PATH', async () => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      await expect(startRedisServer()).rejects.toThrow(/apt-get install redis-server/);
    } finally {
      process.env.PATH = path;
    }
  });
});

describe('uniquePrefix', () => {
  it('is unique per call and safe in keys and queue names', () => {
    const a = uniquePrefix('My Test: lanes');
    const b = uniquePrefix('My Test: lanes');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^t-my-test-lanes-\d+-\d+-[0-9a-f]{6}$/);
  });
});
