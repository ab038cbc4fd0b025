import { FlowfleetError } from '@flowfleet/errors';
import { isCluster, masterConnections, nodeAddress, type RedisClient } from './create-redis.js';

/**
 * Checks that a connected client's mode matches the server: a standalone client on a cluster
 * node would get MOVED for most keys, a cluster client needs masters. Returns the masters.
 * @throws FlowfleetError REDIS_MODE_MISMATCH naming the fix
 */
export async function checkRedisMode(
  client: RedisClient,
): Promise<ReturnType<typeof masterConnections>> {
  const masters = masterConnections(client);
  if (isCluster(client)) {
    if (masters.length === 0) {
      throw new FlowfleetError(
        'REDIS_MODE_MISMATCH',
        'FLOWFLEET_REDIS_MODE=cluster but the cluster reports no master',
        { details: { mode: 'cluster', masters: 0 } },
      );
    }
    return masters;
  }
  const info = await client.info('cluster');
  if (/^cluster_enabled:1\s*$/m.test(info)) {
    throw new FlowfleetError(
      'REDIS_MODE_MISMATCH',
      `${nodeAddress(client)} is a Redis Cluster node: set FLOWFLEET_REDIS_MODE=cluster`,
      { details: { mode: 'standalone', node: nodeAddress(client) } },
    );
  }
  return masters;
}
