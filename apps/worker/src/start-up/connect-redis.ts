import { FlowfleetError } from '@flowfleet/errors';
import { createRedis, isCluster, quitRedis, type RedisClient } from '@flowfleet/redis';
import type { Redis } from 'ioredis';
import { FleetSubscriber } from '../fleet/fleet-subscriber.js';
import { step, type PhaseParts, type StartUpContext } from './shutdown-plan.js';

/** The worker's Redis connections. */
export interface RedisParts extends PhaseParts {
  /** Commands: registration, syncs, lanes, and every BullMQ call. */
  readonly redis: RedisClient;
  /**
   * Dedicated to the lane event waker's `XREAD BLOCK` (standalone only). On a Redis Cluster each
   * lane's events stream is in its own slot and one XREAD cannot span them: idle workers poll
   * their lanes every `pollIntervalMs` instead, and there is no events connection.
   */
  readonly events: Redis | undefined;
  /** The fleet's pub/sub channels, on their own connection. */
  readonly channels: FleetSubscriber;
}

/**
 * Phase 1: connects the three connections (two on a cluster), or none (a failure disconnects
 * them all). All go through the one factory, in `options.redisMode`.
 * @throws FlowfleetError WORKER_REDIS_UNAVAILABLE
 */
export async function connectRedis({ options, logger }: StartUpContext): Promise<RedisParts> {
  const connection = (role: string): RedisClient => {
    const redis = createRedis(options.redisUrl, {
      mode: options.redisMode,
      lazyConnect: true,
      // BullMQ needs it on a connection it is handed; it also keeps commands queued (not failed)
      // across a Redis restart.
      maxRetriesPerRequest: null,
      connectionName: `flowfleet-worker:${options.workerId}:${role}`,
    });
    redis.on('error', (error) => logger.debug({ err: error, role }, 'redis connection error'));
    return redis;
  };
  const redis = connection('main');
  const subscriber = connection('subscriber');
  const blocking = options.redisMode === 'cluster' ? undefined : connection('events');
  const events = blocking === undefined || isCluster(blocking) ? undefined : blocking;
  const all = [redis, subscriber, ...(events === undefined ? [] : [events])];
  try {
    await Promise.all(all.map((each) => each.connect()));
  } catch (cause) {
    for (const each of all) each.disconnect();
    throw new FlowfleetError('WORKER_REDIS_UNAVAILABLE', 'cannot reach Redis', { cause });
  }
  return {
    redis,
    events,
    channels: new FleetSubscriber({ redis: subscriber, logger }),
    shutdown: [
      step('redis', () => Promise.all([subscriber, redis].map(quitRedis))),
      step('redis (events)', async () => events?.disconnect()),
    ],
  };
}
