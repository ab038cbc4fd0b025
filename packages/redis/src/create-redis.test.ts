import { isFlowfleetError } from '@flowfleet/errors';
import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createRedis, isCluster, masterConnections, parseRedisUrl } from './create-redis.js';
import { RedisModeSchema } from './redis-mode.js';

describe('createRedis', () => {
  it('opens a Redis in standalone mode (the default) and a Cluster in cluster mode', () => {
    const standalone = createRedis('redis://127.0.0.1:1', { lazyConnect: true });
    const cluster = createRedis('redis://user:p%40ss@127.0.0.1:2', {
      mode: 'cluster',
      lazyConnect: true,
      maxRetriesPerRequest: null,
      connectionName: 'probe',
    });
    try {
      expect(standalone).toBeInstanceOf(Redis);
      expect(isCluster(standalone)).toBe(false);
      expect(masterConnections(standalone)).toEqual([standalone]);
      expect(cluster).toBeInstanceOf(Cluster);
      expect(isCluster(cluster)).toBe(true);
      const options = (cluster as Cluster).options.redisOptions;
      expect(options).toMatchObject({
        username: 'user',
        password: 'p@ss',
        maxRetriesPerRequest: null,
        connectionName: 'probe',
      });
    } finally {
      standalone.disconnect();
      cluster.disconnect();
    }
  });

  it('refuses a cluster URL it cannot use with REDIS_URL_INVALID, hiding the password', () => {
    for (const url of ['not a url', 'http://h:1', 'redis://:secret@/']) {
      const error = (() => {
        try {
          createRedis(url, { mode: 'cluster', lazyConnect: true });
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(isFlowfleetError(error, 'REDIS_URL_INVALID'), url).toBe(true);
      expect((error as Error).message).not.toContain('secret');
    }
    expect(parseRedisUrl('rediss://h:7000').protocol).toBe('rediss:');
  });

  it('reads FLOWFLEET_REDIS_MODE: standalone by default, cluster, sentinel, nothing else', () => {
    expect(RedisModeSchema.parse(undefined)).toBe('standalone');
    expect(RedisModeSchema.parse('cluster')).toBe('cluster');
    expect(RedisModeSchema.parse('sentinel')).toBe('sentinel');
    expect(RedisModeSchema.safeParse('replicated').success).toBe(false);
  });

  it('makes a sentinel client from the sentinel list and master name in the URL', () => {
    const client = createRedis('rediss://app:p%40ss@s1:26380,[::1]/ff-master?sentinelPassword=sp', {
      mode: 'sentinel',
      lazyConnect: true,
    });
    try {
      expect(isCluster(client)).toBe(false);
      expect(client.options).toMatchObject({
        sentinels: [
          { host: 's1', port: 26380 },
          { host: '::1', port: 26379 },
        ],
        name: 'ff-master',
        role: 'master',
        username: 'app',
        password: 'p@ss',
        sentinelPassword: 'sp',
        enableTLSForSentinelMode: true,
        failoverDetector: false,
      });
      expect(masterConnections(client)).toEqual([client]);
    } finally {
      client.disconnect();
    }
  });
});
