// The test harness's Redis Cluster: a real local cluster of `redis-server --cluster-enabled yes`
// masters joined by `redis-cli --cluster create`, started by the one owner of throwaway Redis
// processes (`@flowfleet/cli/local-redis`, which bench/ uses too). Stable API for tests and benches.
import { sendCommand } from './resp.js';
import { startRedisCluster as start } from '@flowfleet/cli/local-redis';
import type { RedisCluster, RedisClusterOptions } from '@flowfleet/cli/local-redis';

export type {
  RedisCluster,
  RedisClusterNode,
  RedisClusterOptions,
} from '@flowfleet/cli/local-redis';

/**
 * Starts a 3-master (by default) Redis Cluster on free ports and resolves once every node says
 * `cluster_state:ok`; `stop()` removes everything.
 * @throws FlowfleetError CLI_REDIS_UNAVAILABLE, CLI_CHILD_FAILED, CLI_START_TIMEOUT
 */
export function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  return start(options);
}

/** The hash slot of `key` (asked of the cluster: `CLUSTER KEYSLOT`). */
export async function keySlot(cluster: RedisCluster, key: string): Promise<number> {
  const reply = await sendCommand(cluster.nodes[0]!, ['CLUSTER', 'KEYSLOT', key]);
  if (typeof reply !== 'number')
    throw new Error(`CLUSTER KEYSLOT ${key}: ${JSON.stringify(reply)}`);
  return reply;
}

/** The index (into `cluster.nodes`) of the master that serves `slot` (from `CLUSTER SLOTS`). */
export async function nodeOfSlot(cluster: RedisCluster, slot: number): Promise<number> {
  const reply = await sendCommand(cluster.nodes[0]!, ['CLUSTER', 'SLOTS']);
  if (!Array.isArray(reply)) throw new Error(`CLUSTER SLOTS: ${JSON.stringify(reply)}`);
  for (const range of reply) {
    if (!Array.isArray(range)) continue;
    const [from, to, master] = range;
    if (typeof from !== 'number' || typeof to !== 'number' || !Array.isArray(master)) continue;
    if (slot < from || slot > to) continue;
    const index = cluster.nodes.findIndex((node) => node.port === master[1]);
    if (index >= 0) return index;
  }
  throw new Error(`no master serves slot ${slot}`);
}

/** The index of the master that holds `key`. */
export async function nodeOfKey(cluster: RedisCluster, key: string): Promise<number> {
  return nodeOfSlot(cluster, await keySlot(cluster, key));
}
