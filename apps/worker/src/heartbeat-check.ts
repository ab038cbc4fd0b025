import { fleetKeys } from '@flowfleet/protocol';
import { createRedis, type RedisMode } from '@flowfleet/redis';

/** What the container health check asks Redis. */
export interface HeartbeatCheckOptions {
  readonly redisUrl: string;
  /** The worker's FLOWFLEET_REDIS_MODE (default standalone). */
  readonly redisMode?: RedisMode;
  readonly prefix: string;
  readonly workerId: string;
  /** Connect + command bound; default 2 s (a health check must answer, not hang). */
  readonly timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 2_000;

/**
 * True when the worker's heartbeat key exists: the same fact the coordinator uses for "live"
 * (the key lapses when the worker's event loop stalls or it loses Redis). False when the key is
 * absent or Redis does not answer within the bound — never throws, a health check reports.
 */
export async function isHeartbeatAlive(options: HeartbeatCheckOptions): Promise<boolean> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let redis: ReturnType<typeof createRedis>;
  try {
    redis = createRedis(options.redisUrl, {
      mode: options.redisMode ?? 'standalone',
      lazyConnect: true,
      connectTimeout: timeoutMs,
      commandTimeout: timeoutMs,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      connectionName: `flowfleet-worker-health:${options.workerId}`,
    });
  } catch {
    // A REDIS_URL the mode cannot use: nothing to ask.
    return false;
  }
  // Errors surface through the awaited calls below; without a listener ioredis would log them.
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    const key = fleetKeys(options.prefix).heartbeat(options.workerId);
    return (await redis.exists(key)) === 1;
  } catch {
    // Unreachable or slow Redis: the worker cannot be serving either.
    return false;
  } finally {
    redis.disconnect();
  }
}
