// FLOWFLEET_REDIS_MODE=sentinel against a real Sentinel set (master, replica, three sentinels):
// the client finds the master through the sentinels, the coordinator's start-up checks run on the
// current master, WAIT confirms replication (and refuses when replicas are short or the connection
// failed over), and after the master is SIGKILLed the same client writes to the promoted replica.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCoordinator } from '@flowfleet/coordinator';
import { isFlowfleetError } from '@flowfleet/errors';
import {
  checkRedisMode,
  confirmReplicated,
  createRedis,
  markWrites,
  nodeAddress,
} from '@flowfleet/redis';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniquePrefix } from '../harness/redis-server.js';
import { startRedisSentinel, type RedisSentinelSet } from '../harness/redis-sentinel.js';

let set: RedisSentinelSet;
let blobDir: string;

beforeAll(async () => {
  [set, blobDir] = await Promise.all([
    startRedisSentinel({ downAfterMs: 1_000, failoverTimeoutMs: 3_000 }),
    mkdtemp(join(tmpdir(), 'flowfleet-sentinel-')),
  ]);
}, 30_000);

afterAll(async () => {
  await Promise.all([set?.stop(), rm(blobDir, { recursive: true, force: true })]);
});

/** Starts (and closes) a sentinel-mode coordinator; resolves with its start-up error code. */
async function coordinatorStartCode(): Promise<string | undefined> {
  const coordinator = createCoordinator({
    redisUrl: set.url,
    redisMode: 'sentinel',
    prefix: uniquePrefix('sentinel'),
    tokens: null,
    blobDir,
  });
  try {
    await coordinator.start(0);
    return undefined;
  } catch (error) {
    if (isFlowfleetError(error)) return error.code;
    throw error;
  } finally {
    await coordinator.close();
  }
}

async function codeOf(promise: Promise<unknown>): Promise<{ code: string; details: unknown }> {
  try {
    await promise;
  } catch (error) {
    if (isFlowfleetError(error)) return { code: error.code, details: error.details };
    throw error;
  }
  throw new Error('expected a coded error');
}

describe('FLOWFLEET_REDIS_MODE=sentinel', () => {
  it('connects through the sentinels, confirms replication, and follows a failover', async () => {
    const redis = createRedis(set.url, {
      mode: 'sentinel',
      maxRetriesPerRequest: null,
      connectionName: 'sentinel-mode-test',
    }) as Redis;
    redis.on('error', () => undefined);
    try {
      const master = set.nodes[0]!;
      expect(await set.masterPort()).toBe(master.port);
      await redis.set('k', 'v1');
      expect(nodeAddress(redis)).toBe(`127.0.0.1:${master.port}`);
      // The start-up checks run on the master the sentinels name now: the replica's policy
      // (evicting) does not matter while it is a replica, and does once it is promoted.
      expect(await checkRedisMode(redis)).toEqual([redis]);
      const replicaAdmin = createRedis(set.nodes[1]!.url) as Redis;
      await replicaAdmin.config('SET', 'maxmemory-policy', 'allkeys-lru');
      replicaAdmin.disconnect();
      expect(await coordinatorStartCode()).toBeUndefined();

      // WAIT 1: the replica holds every write of this connection.
      let mark = markWrites(redis);
      await redis.set('k', 'v2');
      await confirmReplicated(mark, { replicas: 1, timeoutMs: 2_000 });
      const replica = createRedis(set.nodes[1]!.url) as Redis;
      try {
        expect(await replica.get('k')).toBe('v2');
      } finally {
        replica.disconnect();
      }
      // WAIT 2 with one replica: refused after the timeout, coded.
      mark = markWrites(redis);
      await redis.set('k', 'v3');
      const short = await codeOf(confirmReplicated(mark, { replicas: 2, timeoutMs: 100 }));
      expect(short).toEqual({
        code: 'REDIS_NOT_REPLICATED',
        details: { replicas: 2, acknowledged: 1, timeoutMs: 100, reason: 'timeout' },
      });

      // The master dies; the sentinels promote the replica; the same client writes there.
      mark = markWrites(redis);
      await set.killNode(0);
      const promoted = await set.waitForFailover(master.port, 20_000);
      expect(promoted).toBe(set.nodes[1]!.port);
      await redis.set('k', 'after');
      expect(await redis.get('k')).toBe('after');
      expect(nodeAddress(redis)).toBe(`127.0.0.1:${promoted}`);
      expect(await coordinatorStartCode()).toBe('COORD_REDIS_EVICTION_POLICY');
      // Writes sent before the failover are not covered by a WAIT on the new connection.
      const moved = await codeOf(confirmReplicated(mark, { replicas: 1, timeoutMs: 100 }));
      expect(moved.code).toBe('REDIS_NOT_REPLICATED');
      expect((moved.details as { reason: string }).reason).toBe('reconnected');
    } finally {
      redis.disconnect();
    }
  }, 40_000);

  it('refuses a sentinel URL without a master name, coded, before connecting', async () => {
    expect(
      await codeOf(
        Promise.resolve().then(() => createRedis('redis://127.0.0.1:1', { mode: 'sentinel' })),
      ),
    ).toMatchObject({ code: 'REDIS_URL_INVALID' });
  });
});
