import { isFlowfleetError } from '@flowfleet/errors';
import type { LocalRedis } from './local-redis.js';
import { startRedisContainer } from './redis-container.js';
import { startRedisProcess, type RedisProcessOptions } from './redis-process.js';

/** Where the local fleet's Redis comes from. */
export interface ResolveRedisOptions extends RedisProcessOptions {
  /** `--redis` or `REDIS_URL`: used as is, never stopped. */
  readonly url?: string;
  /** Starts a container when redis-server is missing (default: testcontainers). */
  readonly startContainer?: () => Promise<LocalRedis>;
}

/**
 * The local fleet's Redis, in this order: a given URL; a `redis-server` child on a free port;
 * a Redis container through testcontainers (when installed and a Docker engine answers).
 * @throws FlowfleetError CLI_REDIS_UNAVAILABLE naming how to install Redis; CLI_CHILD_FAILED,
 *   CLI_START_TIMEOUT when redis-server is installed but does not come up
 */
export async function resolveRedis(options: ResolveRedisOptions = {}): Promise<LocalRedis> {
  if (options.url !== undefined) {
    return { url: options.url, kind: 'external', stop: () => Promise.resolve() };
  }
  try {
    return await startRedisProcess(options);
  } catch (error) {
    const notInstalled =
      isFlowfleetError(error, 'CLI_REDIS_UNAVAILABLE') &&
      (error.details as { reason?: unknown } | undefined)?.reason === 'ENOENT';
    if (!notInstalled) throw error;
  }
  return (options.startContainer ?? startRedisContainer)();
}
