import { z } from 'zod';

/**
 * How flowfleet talks to Redis: one server (`standalone`), a Redis Cluster (`cluster`), or the
 * master of a Sentinel-monitored group (`sentinel`).
 */
export const REDIS_MODES = ['standalone', 'cluster', 'sentinel'] as const;
/** One of REDIS_MODES. */
export type RedisMode = (typeof REDIS_MODES)[number];

/**
 * `FLOWFLEET_REDIS_MODE` as each app's env schema reads it: `standalone` (default), `cluster`
 * (then `REDIS_URL` names any seed node of the cluster) or `sentinel` (then `REDIS_URL` lists the
 * sentinels and names the master group: `redis://[user:pass@]s1:26379,s2:26379/<master-name>`).
 */
export const RedisModeSchema = z.enum(REDIS_MODES).default('standalone');
