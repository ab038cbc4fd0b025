// The coordinator's start-up checks against a real cluster: every master must be `noeviction`,
// and FLOWFLEET_REDIS_MODE must match what REDIS_URL reaches.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCoordinator, type CoordinatorOptions } from '@flowfleet/coordinator';
import { isFlowfleetError } from '@flowfleet/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisCluster } from '../harness/redis-cluster.js';
import { startRedisServer, uniquePrefix, type RedisServer } from '../harness/redis-server.js';
import { sendCommand } from '../harness/resp.js';

let cluster: RedisCluster;
let single: RedisServer;
let blobDir: string;

beforeAll(async () => {
  [cluster, single, blobDir] = await Promise.all([
    startRedisCluster(),
    startRedisServer(),
    mkdtemp(join(tmpdir(), 'flowfleet-mode-')),
  ]);
});

afterAll(async () => {
  await Promise.all([
    cluster?.stop(),
    single?.stop(),
    rm(blobDir, { recursive: true, force: true }),
  ]);
});

/** Starts (and closes) a coordinator; resolves with the start-up error, or undefined. */
async function startError(options: Pick<CoordinatorOptions, 'redisUrl' | 'redisMode'>) {
  const coordinator = createCoordinator({
    ...options,
    prefix: uniquePrefix('mode'),
    tokens: null,
    blobDir,
  });
  try {
    await coordinator.start(0);
    return undefined;
  } catch (error) {
    return error;
  } finally {
    await coordinator.close();
  }
}

describe('the coordinator on a Redis Cluster', () => {
  it('starts in cluster mode from any seed node', async () => {
    expect(await startError({ redisUrl: cluster.nodes[1]!.url, redisMode: 'cluster' })).toBe(
      undefined,
    );
  });

  it('refuses to start when any one master may evict, naming that master', async () => {
    const last = cluster.nodes[2]!;
    await sendCommand(last, ['CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru']);
    try {
      // Seeded from another node: a check of the seed alone would pass.
      const error = await startError({ redisUrl: cluster.nodes[0]!.url, redisMode: 'cluster' });
      expect(isFlowfleetError(error, 'COORD_REDIS_EVICTION_POLICY')).toBe(true);
      expect((error as { details: unknown }).details).toMatchObject({
        policy: 'allkeys-lru',
        node: `127.0.0.1:${last.port}`,
      });
      expect((error as Error).message).toMatch(/every master/);
    } finally {
      await sendCommand(last, ['CONFIG', 'SET', 'maxmemory-policy', 'noeviction']);
    }
  });

  it('refuses standalone mode on a cluster node with REDIS_MODE_MISMATCH', async () => {
    const error = await startError({ redisUrl: cluster.url, redisMode: 'standalone' });
    expect(isFlowfleetError(error, 'REDIS_MODE_MISMATCH')).toBe(true);
    expect((error as Error).message).toMatch(/FLOWFLEET_REDIS_MODE=cluster/);
  });

  it('cannot start in cluster mode on a server without cluster support', async () => {
    const error = await startError({ redisUrl: single.url, redisMode: 'cluster' });
    expect(isFlowfleetError(error, 'COORD_REDIS_UNAVAILABLE')).toBe(true);
  });
});
