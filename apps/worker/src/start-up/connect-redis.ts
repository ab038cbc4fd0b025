import { FlowfleetError } from '@flowfleet/errors';
import { Redis } from 'ioredis';
import { FleetSubscriber } from '../fleet/fleet-subscriber.js';
import { quitRedis } from '../fleet/quit-redis.js';
import { step, type PhaseParts, type StartUpContext } from './shutdown-plan.js';

/** The worker's Redis connections. */
export interface RedisParts extends PhaseParts {
  /** Commands: registration, syncs, lanes, and every BullMQ call. */
  readonly redis: Redis;
  /** Dedicated to the lane event waker's `XREAD BLOCK`. */
  readonly events: Redis;
  /** The fleet's pub/sub channels, on their own connection. */
  readonly channels: FleetSubscriber;
}

/**
 * Phase 1: connects the three connections, or none (a failure disconnects them all).
 * @throws FlowfleetError WORKER_REDIS_UNAVAILABLE
 */
export async function connectRedis({ options, logger }: StartUpContext): Promise<RedisParts> {
  const connection = (role: string): Redis => {
    const redis = new Redis(options.redisUrl, {
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
  const events = connection('events');
  try {
    await Promise.all([redis.connect(), subscriber.connect(), events.connect()]);
  } catch (cause) {
    for (const each of [redis, subscriber, events]) each.disconnect();
    throw new FlowfleetError('WORKER_REDIS_UNAVAILABLE', 'cannot reach Redis', { cause });
  }
  return {
    redis,
    events,
    channels: new FleetSubscriber({ redis: subscriber, logger }),
    shutdown: [
      step('redis', () => Promise.all([subscriber, redis].map(quitRedis))),
      step('redis (events)', async () => events.disconnect()),
    ],
  };
}
