import { FlowfleetError } from '@flowfleet/errors';
import { connectionGeneration } from './connection-generation.js';
import { isCluster, nodeAddress, type RedisClient } from './create-redis.js';

/**
 * How many replicas must hold a write before flowfleet acknowledges it
 * (`FLOWFLEET_REDIS_WAIT_REPLICAS`, `FLOWFLEET_REDIS_WAIT_TIMEOUT_MS`; ADR 010). `replicas: 0`
 * (the default) acknowledges on the master's word alone: a failover can lose the writes of the
 * last moments before it (asynchronous replication).
 */
export interface ReplicationPolicy {
  readonly replicas: number;
  readonly timeoutMs: number;
}

/** No waiting: what Redis's asynchronous replication gives by itself. */
export const NO_REPLICATION_WAIT: ReplicationPolicy = Object.freeze({ replicas: 0, timeoutMs: 0 });

/** Which connection of `client` a write goes out on (taken before the writes). */
export interface WriteMark {
  readonly client: RedisClient;
  readonly generation: number | undefined;
}

/** Marks the connection the next writes of `client` go out on. */
export function markWrites(client: RedisClient): WriteMark {
  return { client, generation: isCluster(client) ? undefined : connectionGeneration(client) };
}

/**
 * Waits until `policy.replicas` replicas hold every write `mark.client` sent since `mark` (and
 * everything the master had before them: replication is one ordered stream), with Redis's
 * `WAIT numreplicas timeout` on the same connection. It covers only that connection's writes, so
 * a reconnect in between (a failover) fails it too: the writes went to a master that may be gone.
 * Returns at once when `policy.replicas` is 0.
 * @throws FlowfleetError REDIS_NOT_REPLICATED when fewer replicas acknowledged within the timeout,
 *   or the connection changed; the writes are on the master and may or may not survive a failover
 */
export async function confirmReplicated(mark: WriteMark, policy: ReplicationPolicy): Promise<void> {
  if (policy.replicas <= 0) return;
  const { client } = mark;
  if (isCluster(client)) {
    throw new FlowfleetError(
      'REDIS_NOT_REPLICATED',
      'FLOWFLEET_REDIS_WAIT_REPLICAS is not supported on a Redis Cluster connection',
      { details: { replicas: policy.replicas, acknowledged: 0, reason: 'cluster' } },
    );
  }
  const acknowledged = Number(await client.call('WAIT', policy.replicas, policy.timeoutMs));
  const reconnected = connectionGeneration(client) !== mark.generation;
  if (acknowledged >= policy.replicas && !reconnected) return;
  const master = nodeAddress(client);
  throw new FlowfleetError(
    'REDIS_NOT_REPLICATED',
    reconnected
      ? `the Redis connection to ${master} was re-established while its writes replicated (a failover?): they may be lost`
      : `only ${acknowledged} of ${policy.replicas} Redis replicas acknowledged within ${policy.timeoutMs} ms (master ${master})`,
    {
      details: {
        replicas: policy.replicas,
        acknowledged,
        timeoutMs: policy.timeoutMs,
        reason: reconnected ? 'reconnected' : 'timeout',
      },
    },
  );
}
