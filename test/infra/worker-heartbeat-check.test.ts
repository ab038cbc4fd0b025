// The worker image's health check: live exactly while the worker's heartbeat key exists, and
// a prompt "no" when Redis does not answer.
import { fleetKeys } from '@flowfleet/protocol';
import { isHeartbeatAlive } from '@flowfleet/worker';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  freePort,
  startRedisServer,
  uniquePrefix,
  type RedisServer,
} from '../harness/redis-server.js';
import { sendCommand } from '../harness/resp.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.stop();
});

test('follows the heartbeat key the worker writes', async () => {
  const prefix = uniquePrefix('heartbeat-check');
  const options = { redisUrl: redis.url, prefix, workerId: 'pod-a' };
  const key = fleetKeys(prefix).heartbeat('pod-a');
  expect(await isHeartbeatAlive(options)).toBe(false);
  await sendCommand(redis, ['SET', key, '{}', 'PX', '60000']);
  expect(await isHeartbeatAlive(options)).toBe(true);
  expect(await isHeartbeatAlive({ ...options, workerId: 'pod-b' })).toBe(false);
  await sendCommand(redis, ['DEL', key]);
  expect(await isHeartbeatAlive(options)).toBe(false);
});

test('answers false within its bound when Redis is unreachable', async () => {
  const port = await freePort(); // nothing listens there
  const started = Date.now();
  const alive = await isHeartbeatAlive({
    redisUrl: `redis://127.0.0.1:${port}`,
    prefix: 'ff',
    workerId: 'w',
    timeoutMs: 500,
  });
  expect(alive).toBe(false);
  expect(Date.now() - started).toBeLessThan(2_000);
});
