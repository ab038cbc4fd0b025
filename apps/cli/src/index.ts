export { CLI_VERSION, runCli } from './program.js';
export type { CliIo } from './cli-io.js';
export { EXIT_CODES, exitCodeFor } from './exit-codes.js';
export { startLocalFleet } from './local-fleet/local-fleet.js';
export type { LocalFleet, LocalFleetOptions, UnexpectedExit } from './local-fleet/local-fleet.js';
export type { LocalFleetTokens } from './local-fleet/fleet-env.js';
export type { LocalRedis } from './local-fleet/local-redis.js';
export { resolveRedis } from './local-fleet/resolve-redis.js';
export type { ResolveRedisOptions } from './local-fleet/resolve-redis.js';
export { parseLogLine } from './format/log-line.js';
export type { LogLevel, LogRecord } from './format/log-line.js';
export {
  ADVANTAGE_EPSILON,
  channelZeroMean,
  groupAdvantages,
  perturbWeights,
} from './demo/grpo.js';
