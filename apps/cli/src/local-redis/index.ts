// `@flowfleet/cli/local-redis`: the one owner of starting a throwaway Redis (a redis-server child,
// a testcontainers container, or a local Redis Cluster). The CLI's `up` uses it, and so do test/
// and bench/ (which may import app packages' exports; DESIGN.md §1).
export { startRedisCluster, redisCli } from './redis-cluster.js';
export type { RedisCluster, RedisClusterNode, RedisClusterOptions } from './redis-cluster.js';
export type { LocalRedis } from './local-redis.js';
export { INSTALL_REDIS_HINT } from './local-redis.js';
export { pingRedis } from './ping-redis.js';
