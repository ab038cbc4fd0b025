import { FlowfleetError } from '@flowfleet/errors';
import { checkRedisMode, nodeAddress, type RedisClient } from '@flowfleet/redis';

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
 * `node` (e.g. `10.0.0.2:7001`) names the master in the message and details when given.
 * @throws FlowfleetError `COORD_REDIS_EVICTION_POLICY` naming the current policy and the fix.
 */
export async function assertNoEviction(redis: InfoSource, node?: string): Promise<void> {
  const policy = await readEvictionPolicy(redis);
  if (policy === 'noeviction') return;
  const current = policy ?? '(not reported)';
  const where = node === undefined ? 'Redis' : `Redis master ${node}`;
  throw new FlowfleetError(
    'COORD_REDIS_EVICTION_POLICY',
    `${where} maxmemory-policy is ${current}; flowfleet needs noeviction (evicted keys lose jobs). ` +
      'Fix: run `CONFIG SET maxmemory-policy noeviction` (and `CONFIG REWRITE`), or put ' +
      '`maxmemory-policy noeviction` in redis.conf' +
      (node === undefined ? '.' : ', on every master of the cluster.'),
    {
      details: { policy: current, required: 'noeviction', ...(node === undefined ? {} : { node }) },
    },
  );
}

/**
 * The start-up check on a connected client: its mode matches the server, and every master (the
 * one server, or each master of a cluster: keys of every lane live on some master) is `noeviction`.
 * @throws FlowfleetError `REDIS_MODE_MISMATCH`, `COORD_REDIS_EVICTION_POLICY` (the first master
 *   found evicting, named in `details.node` on a cluster)
 */
export async function assertNoEvictionOnMasters(redis: RedisClient): Promise<void> {
  const masters = await checkRedisMode(redis);
  if (masters.length === 1 && masters[0] === redis) return assertNoEviction(redis);
  for (const master of masters) await assertNoEviction(master, nodeAddress(master));
}
