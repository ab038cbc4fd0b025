export { runCli } from './program.js';
export type { CliIo } from './cli-io.js';
export { startLocalFleet } from './local-fleet/local-fleet.js';
export type { LocalFleet, LocalFleetOptions, UnexpectedExit } from './local-fleet/local-fleet.js';
export type { LocalFleetTokens } from './local-fleet/fleet-env.js';
export type { LocalRedis } from './local-redis/local-redis.js';
export type { LogLevel, LogRecord } from './format/log-line.js';
