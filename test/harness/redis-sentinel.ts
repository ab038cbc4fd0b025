// The test harness's Sentinel set: a real master, replica(s) and three `redis-server --sentinel`
// processes (what Debian's redis-sentinel package runs), started by the one owner of throwaway
// Redis processes (`@flowfleet/cli/local-redis`, which bench/ uses too).
export { startRedisSentinel } from '@flowfleet/cli/local-redis';
export type {
  RedisSentinelMember,
  RedisSentinelOptions,
  RedisSentinelSet,
} from '@flowfleet/cli/local-redis';
