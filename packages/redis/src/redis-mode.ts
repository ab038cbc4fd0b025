import { z } from 'zod';

/** How flowfleet talks to Redis: one server (`standalone`) or a Redis Cluster (`cluster`). */
export const REDIS_MODES = ['standalone', 'cluster'] as const;
/** One of REDIS_MODES. */
export type RedisMode = (typeof REDIS_MODES)[number];

/**
 * `FLOWFLEET_REDIS_MODE` as each app's env schema reads it: `standalone` (default) or `cluster`
 * (then `REDIS_URL` names any seed node of the cluster).
 */
export const RedisModeSchema = z.enum(REDIS_MODES).default('standalone');
