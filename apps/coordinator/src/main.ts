// The coordinator process: env → root logger → coordinator → signals. The only module with
// signal handlers and a root logger (STYLE.md rules 12 and 14).
import { isFlowfleetError } from '@flowfleet/errors';
import { pino } from 'pino';
import { replicationFromEnv } from '@flowfleet/redis';
import { createCoordinator } from './create-coordinator.js';
import {
  limitsFromEnv,
  parseCoordinatorEnv,
  retentionFromEnv,
  tokensFromEnv,
  type CoordinatorEnv,
} from './env.js';

/** Exit code for a bad environment (distinct from a failed start-up). */
const EXIT_BAD_ENV = 2;
const EXIT_START_FAILED = 1;
/** A shutdown that takes longer than this is cut short. */
const SHUTDOWN_DEADLINE_MS = 30_000;

/** Log paths that may carry secrets. */
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.headers.authorization',
  'authorization',
  'token',
  '*.token',
  'tokens',
  '*.tokens',
  'password',
  '*.password',
];

async function main(): Promise<void> {
  let env: CoordinatorEnv;
  try {
    env = parseCoordinatorEnv(process.env);
  } catch (error) {
    process.stderr.write(`flowfleet coordinator: ${(error as Error).message}\n`);
    process.exitCode = EXIT_BAD_ENV;
    return;
  }
  const logger = pino({
    level: env.FLOWFLEET_LOG_LEVEL,
    base: { service: 'coordinator', pid: process.pid },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  });
  const tokens = tokensFromEnv(env);
  if (tokens === null) logger.warn('FLOWFLEET_AUTH=off: every caller holds every role');
  const coordinator = createCoordinator({
    redisUrl: env.REDIS_URL,
    redisMode: env.FLOWFLEET_REDIS_MODE,
    redisReplication: replicationFromEnv(env),
    prefix: env.FLOWFLEET_PREFIX,
    tokens,
    blobDir: env.FLOWFLEET_BLOB_DIR,
    logger,
    limits: limitsFromEnv(env),
    heartbeatTtlMs: env.FLOWFLEET_HEARTBEAT_TTL_MS,
    ...(env.FLOWFLEET_SCALING_CLASSES !== undefined
      ? { scalingClasses: env.FLOWFLEET_SCALING_CLASSES }
      : {}),
    redisCommandTimeoutMs: env.FLOWFLEET_REDIS_COMMAND_TIMEOUT_MS,
    retention: retentionFromEnv(env),
    ...(env.FLOWFLEET_EGRESS_BYTES_PER_S === undefined
      ? {}
      : { egressBytesPerSecond: env.FLOWFLEET_EGRESS_BYTES_PER_S }),
  });

  let stopping = false;
  const stop = (signal: NodeJS.Signals | 'parent-exit'): void => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(EXIT_START_FAILED);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    setTimeout(() => {
      logger.error('shutdown deadline passed: exiting');
      process.exit(EXIT_START_FAILED);
    }, SHUTDOWN_DEADLINE_MS).unref();
    void coordinator.close();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  if (env.FLOWFLEET_EXIT_WITH_PARENT === '1') {
    // The parent holds our stdin pipe open and never writes: EOF means it is gone, even when it
    // was SIGKILLed (Node has no PR_SET_PDEATHSIG). Shut down as on SIGTERM.
    const parentGone = (): void => {
      if (!stopping) stop('parent-exit');
    };
    process.stdin.once('end', parentGone);
    process.stdin.once('error', parentGone);
    process.stdin.resume();
    // Watching must not keep the process alive once everything else has closed.
    (process.stdin as { unref?: () => void }).unref?.();
  }

  try {
    await coordinator.start(env.FLOWFLEET_PORT, env.FLOWFLEET_HOST);
  } catch (error) {
    if (isFlowfleetError(error)) {
      logger.fatal({ code: error.code, details: error.details }, error.message);
    } else {
      logger.fatal({ err: error }, 'coordinator failed to start');
    }
    process.exitCode = EXIT_START_FAILED;
    await coordinator.close();
  }
}

await main();
