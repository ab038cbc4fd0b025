// infra/redis.conf is a config a real redis-server accepts, with the two settings the
// coordinator needs; the Kubernetes Redis component ships the same bytes.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { freePort } from '../harness/redis-server.js';
import { sendCommand, type RespReply } from '../harness/resp.js';
import { infraPath } from './support/manifests.js';

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

test('the Kubernetes Redis component ships infra/redis.conf byte for byte', async () => {
  const [canonical, copy] = await Promise.all([
    readFile(infraPath('redis.conf'), 'utf8'),
    readFile(infraPath('k8s/components/redis/redis.conf'), 'utf8'),
  ]);
  expect(copy).toBe(canonical);
});

test('redis-server starts on infra/redis.conf with AOF and noeviction', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'flowfleet-redis-conf-'));
  const port = await freePort();
  // The file as shipped; only where it listens and writes is overridden for the test.
  const child = spawn(
    'redis-server',
    [infraPath('redis.conf'), '--port', String(port), '--bind', '127.0.0.1', '--dir', dir],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  cleanups.push(async () => {
    child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  });
  const target = { host: '127.0.0.1', port };
  const deadline = Date.now() + 10_000;
  let pong: RespReply = null;
  while (pong !== 'PONG') {
    if (child.exitCode !== null)
      throw new Error(`redis-server refused infra/redis.conf:\n${output}`);
    if (Date.now() > deadline) throw new Error(`redis-server did not answer PING:\n${output}`);
    pong = await sendCommand(target, ['PING'], 500).catch(() => null);
    if (pong !== 'PONG') await new Promise((resolve) => setTimeout(resolve, 25));
  }
  expect(await sendCommand(target, ['CONFIG', 'GET', 'maxmemory-policy'])).toEqual([
    'maxmemory-policy',
    'noeviction',
  ]);
  expect(await sendCommand(target, ['CONFIG', 'GET', 'appendonly'])).toEqual(['appendonly', 'yes']);
  expect(await sendCommand(target, ['CONFIG', 'GET', 'appendfsync'])).toEqual([
    'appendfsync',
    'everysec',
  ]);
});
