import { FlowfleetError } from '@flowfleet/errors';
import { parseRedisUrl } from './create-redis.js';
import type { RedisMode } from './redis-mode.js';
import { parseSentinelUrl } from './sentinel-url.js';

/**
 * What is wrong with `url` as `REDIS_URL` in `mode` (for the apps' env checks), or undefined
 * when it can be used: one `redis[s]://host[:port]` URL, or in `sentinel` mode the sentinel list
 * and master name.
 */
export function redisUrlIssue(url: string, mode: RedisMode): string | undefined {
  try {
    if (mode === 'sentinel') parseSentinelUrl(url);
    else parseRedisUrl(url);
    return undefined;
  } catch (error) {
    if (error instanceof FlowfleetError) {
      const reason = (error.details as { reason?: unknown } | undefined)?.reason;
      return typeof reason === 'string' ? reason : error.message;
    }
    throw error;
  }
}
