import { once } from 'node:events';
import type { RedisClient } from '@flowfleet/redis';

const QUIT_TIMEOUT_MS = 2_000;

/** QUIT, then wait for the connection to end (disconnect if QUIT fails or hangs). */
export async function quitRedis(redis: RedisClient): Promise<void> {
  if (redis.status === 'end') return;
  if (redis.status !== 'ready') {
    // Never connected, or reconnecting: nothing to QUIT politely; stop any retry.
    redis.disconnect();
    return;
  }
  const ended = once(redis, 'end');
  const timer = setTimeout(() => redis.disconnect(), QUIT_TIMEOUT_MS);
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
  await ended;
  clearTimeout(timer);
}
