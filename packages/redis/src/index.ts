export { REDIS_MODES, RedisModeSchema } from './redis-mode.js';
export type { RedisMode } from './redis-mode.js';
export {
  createRedis,
  isCluster,
  masterConnections,
  nodeAddress,
  parseRedisUrl,
} from './create-redis.js';
export type { RedisClient, RedisConnectOptions } from './create-redis.js';
export { CLUSTER_SLOTS, groupBySlot, hashTagOf, keySlot } from './key-slot.js';
export { checkRedisMode } from './check-mode.js';
