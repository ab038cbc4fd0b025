// The worker process: env → root logger → worker → signals. The only module with signal
// handlers and a root logger (STYLE.md rules 12 and 14).
import { isFlowfleetError } from '@flowfleet/errors';
import { pino } from 'pino';
import { createWorker } from './create-worker.js';
import { parseWorkerEnv, workerOptionsFromEnv, type WorkerEnv } from './env.js';

/** Exit code for a bad environment (distinct from a failed start-up). */
const EXIT_BAD_ENV = 2;
const EXIT_FAILED = 1;
/** Past the drain bound, the shutdown itself gets this long before the process exits anyway. */
const SHUTDOWN_SLACK_MS = 20_000;

/** Log paths that may carry secrets. */
const REDACT_PATHS = [
  'workerToken',
  '*.workerToken',
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'password',
  '*.password',
  'redisUrl',
  '*.redisUrl',
];

async function main(): Promise<void> {
  let env: WorkerEnv;
  try {
    env = parseWorkerEnv(process.env);
  } catch (error) {
    process.stderr.write(`flowfleet worker: ${(error as Error).message}\n`);
    process.exitCode = EXIT_BAD_ENV;
    return;
  }
  const logger = pino({
    level: env.FLOWFLEET_LOG_LEVEL,
    base: { service: 'worker', pid: process.pid },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  });
  const options = workerOptionsFromEnv(env);
  const worker = createWorker({ ...options, logger });

  let stopping = false;
  const stop = (signal: NodeJS.Signals | 'parent-exit'): void => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(EXIT_FAILED);
    }
    stopping = true;
    logger.info({ signal, drainTimeoutMs: options.drainTimeoutMs }, 'shutting down');
    setTimeout(
      () => {
        logger.error('shutdown deadline passed: exiting');
        process.exit(EXIT_FAILED);
      },
      (options.drainTimeoutMs ?? 0) + SHUTDOWN_SLACK_MS,
    ).unref();
    void worker.close();
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
    await worker.start();
  } catch (error) {
    if (stopping) {
      logger.info('stopped during start-up');
      return;
    }
    if (isFlowfleetError(error)) {
      logger.fatal({ code: error.code, details: error.details, err: error }, error.message);
    } else {
      logger.fatal({ err: error }, 'worker failed to start');
    }
    process.exitCode = EXIT_FAILED;
    await worker.close();
  }
}

await main();
