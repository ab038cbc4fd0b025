import { once } from 'node:events';
import type { RedisClient } from './create-redis.js';

/** How long QUIT may take before the connection is dropped instead. */
export const QUIT_TIMEOUT_MS = 2_000;

/**
 * Closes a connection politely: QUIT, then waits for it to end; disconnects when QUIT fails,
 * hangs longer than `timeoutMs`, or the connection is not ready (never connected, reconnecting —
 * which also stops any retry). Idempotent: a connection that has ended is left alone.
 */
export async function quitRedis(redis: RedisClient, timeoutMs = QUIT_TIMEOUT_MS): Promise<void> {
  if (redis.status === 'end') return;
  if (redis.status !== 'ready') {
    redis.disconnect();
    return;
  }
  const ended = once(redis, 'end');
  const timer = setTimeout(() => redis.disconnect(), timeoutMs);
  try {
    await redis.quit();
  } catch {
    // QUIT fails when the connection is already gone; disconnect stops any pending retry.
    redis.disconnect();
  }
  await ended;
  clearTimeout(timer);
}
