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
export { DEFAULT_SENTINEL_PORT, parseSentinelUrl, redactSentinelUrl } from './sentinel-url.js';
export type { SentinelTarget } from './sentinel-url.js';
export { redisUrlIssue } from './url-issue.js';
export {
  DEFAULT_WAIT_TIMEOUT_MS,
  redisEnvIssues,
  redisEnvShape,
  replicationFromEnv,
} from './redis-env.js';
export type { RedisEnv } from './redis-env.js';
export { confirmReplicated, markWrites, NO_REPLICATION_WAIT } from './replication.js';
export type { ReplicationPolicy, WriteMark } from './replication.js';
export { CLUSTER_SLOTS, groupBySlot, hashTagOf, keySlot } from './key-slot.js';
export { checkRedisMode } from './check-mode.js';
export { QUIT_TIMEOUT_MS, quitRedis } from './quit-redis.js';
