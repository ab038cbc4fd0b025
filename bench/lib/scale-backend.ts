// The Redis that bench:scale runs on: one redis-server (bench/lib/redis-server.ts), or a local
// 3-master Redis Cluster (@flowfleet/cli/local-redis, the one owner of throwaway clusters), each
// with `maxclients` raised for one connection per simulated worker (ioredis Cluster opens one per
// master). `masters` are plain connections to every master, for INFO.
import { startRedisCluster } from '@flowfleet/cli/local-redis';
import type { RedisMode } from '@flowfleet/redis';
import { Redis } from 'ioredis';
import { startBenchRedis } from './redis-server.js';

/** A running Redis for one mode of the bench. */
export interface ScaleBackend {
  readonly mode: RedisMode;
  /** The URL children get (a seed node on a cluster). */
  readonly url: string;
  readonly version: string;
  /** One INFO connection per master, with its `host:port`. */
  readonly masters: readonly { readonly node: string; readonly redis: Redis }[];
  stop(): Promise<void>;
}

/**
 * Starts the Redis of `mode` with `maxclients` on every master.
 * @throws Error (or the harness's coded errors) when it does not come up
 */
export async function startScaleBackend(
  mode: RedisMode,
  maxClients: number,
): Promise<ScaleBackend> {
  if (mode === 'standalone') {
    const server = await startBenchRedis(['--maxclients', String(maxClients)]);
    const redis = new Redis(server.url, { maxRetriesPerRequest: null });
    return {
      mode,
      url: server.url,
      version: server.version,
      masters: [{ node: server.url.replace('redis://', ''), redis }],
      async stop() {
        redis.disconnect();
        await server.stop();
      },
    };
  }
  const cluster = await startRedisCluster({ masters: 3 });
  const masters = cluster.nodes.map((node) => ({
    node: `${node.host}:${node.port}`,
    redis: new Redis(node.url, { maxRetriesPerRequest: null }),
  }));
  try {
    await Promise.all(
      masters.map(({ redis }) => redis.config('SET', 'maxclients', String(maxClients))),
    );
    const info = await masters[0]!.redis.info('server');
    return {
      mode,
      url: cluster.url,
      version: /redis_version:([\d.]+)/.exec(info)?.[1] ?? 'unknown',
      masters,
      async stop() {
        for (const { redis } of masters) redis.disconnect();
        await cluster.stop();
      },
    };
  } catch (error) {
    for (const { redis } of masters) redis.disconnect();
    await cluster.stop();
    throw error;
  }
}
