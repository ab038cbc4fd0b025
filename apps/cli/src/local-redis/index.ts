// `@flowfleet/cli/local-redis`: the one owner of starting a throwaway Redis (a redis-server child,
// a testcontainers container, or a local Redis Cluster). The CLI's `up` uses it, and so do test/
// and bench/ (which may import app packages' exports; DESIGN.md §1).
export { startRedisCluster, redisCli } from './redis-cluster.js';
export type { RedisCluster, RedisClusterNode, RedisClusterOptions } from './redis-cluster.js';
export { startRedisSentinel } from './redis-sentinel.js';
export type {
  RedisSentinelMember,
  RedisSentinelOptions,
  RedisSentinelSet,
} from './redis-sentinel.js';
export type { LocalRedis, LocalRedisOptions } from './local-redis.js';
export { INSTALL_REDIS_HINT } from './local-redis.js';
export { pingRedis } from './ping-redis.js';
export { resolveRedis } from './resolve-redis.js';
export type { ResolveRedisOptions } from './resolve-redis.js';
export { startRedisProcess } from './redis-process.js';
export type { RedisProcessOptions } from './redis-process.js';
export { startRedisContainer, REDIS_IMAGE } from './redis-container.js';
export {
  chooseRedisStarter,
  chooseRedisStarterOnce,
  describeRedisChoice,
  probeContainerRuntime,
  DEFAULT_PROBE_TIMEOUT_MS,
  REDIS_STARTER_ENV,
} from './choose-redis.js';
export type { ChooseRedisOptions, RedisChoice, RedisStarter } from './choose-redis.js';
