import { FlowfleetError } from '@flowfleet/errors';

/** The one Redis call the check needs (a plain object in unit tests, ioredis in the app). */
export interface InfoSource {
  info(section: 'memory'): Promise<string>;
}

/** Reads `maxmemory_policy` from `INFO memory` (INFO works where CONFIG is disabled). */
export async function readEvictionPolicy(redis: InfoSource): Promise<string | undefined> {
  const info = await redis.info('memory');
  const match = /^maxmemory_policy:(\S+)\s*$/m.exec(info);
  return match?.[1];
}

/**
 * Refuses a Redis that may evict keys: BullMQ jobs, locks and fleet state would vanish silently.
 * @throws FlowfleetError `COORD_REDIS_EVICTION_POLICY` naming the current policy and the fix.
 */
export async function assertNoEviction(redis: InfoSource): Promise<void> {
  const policy = await readEvictionPolicy(redis);
  if (policy === 'noeviction') return;
  const current = policy ?? '(not reported)';
  throw new FlowfleetError(
    'COORD_REDIS_EVICTION_POLICY',
    `Redis maxmemory-policy is ${current}; flowfleet needs noeviction (evicted keys lose jobs). ` +
      'Fix: run `CONFIG SET maxmemory-policy noeviction` (and `CONFIG REWRITE`), or put ' +
      '`maxmemory-policy noeviction` in redis.conf.',
    { details: { policy: current, required: 'noeviction' } },
  );
}
