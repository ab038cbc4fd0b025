import type { LogLevel } from '../format/log-line.js';

/** The role tokens of a local fleet (random per `up`). */
export interface LocalFleetTokens {
  readonly trainer: string;
  readonly viewer: string;
  readonly worker: string;
}

/** What the coordinator and the workers of one local fleet share. */
export interface FleetEnvCommon {
  /** The children's base environment (the CLI's own, usually). */
  readonly base: Readonly<Record<string, string | undefined>>;
  readonly redisUrl: string;
  readonly prefix: string;
  readonly logLevel: LogLevel;
  readonly tokens: LocalFleetTokens;
}

function shared(common: FleetEnvCommon): NodeJS.ProcessEnv {
  return {
    ...common.base,
    REDIS_URL: common.redisUrl,
    FLOWFLEET_PREFIX: common.prefix,
    FLOWFLEET_LOG_LEVEL: common.logLevel,
    // The children exit when the CLI dies, even by SIGKILL (their stdin pipe closes).
    FLOWFLEET_EXIT_WITH_PARENT: '1',
  };
}

/** The coordinator's environment (apps/coordinator/src/env.ts): port, tokens, blob dir. */
export function coordinatorEnv(
  common: FleetEnvCommon,
  port: number,
  blobDir: string,
): NodeJS.ProcessEnv {
  return {
    ...shared(common),
    FLOWFLEET_PORT: String(port),
    FLOWFLEET_HOST: '127.0.0.1',
    FLOWFLEET_AUTH: 'on',
    FLOWFLEET_TRAINER_TOKEN: common.tokens.trainer,
    FLOWFLEET_VIEWER_TOKEN: common.tokens.viewer,
    FLOWFLEET_WORKER_TOKEN: common.tokens.worker,
    FLOWFLEET_BLOB_DIR: blobDir,
  };
}

/** One worker's environment (apps/worker/src/env.ts). */
export function workerEnv(
  common: FleetEnvCommon,
  worker: {
    readonly coordinatorUrl: string;
    readonly workerId: string;
    readonly backend: string;
    readonly drainTimeoutMs: number;
  },
): NodeJS.ProcessEnv {
  return {
    ...shared(common),
    FLOWFLEET_COORDINATOR_URL: worker.coordinatorUrl,
    FLOWFLEET_WORKER_TOKEN: common.tokens.worker,
    FLOWFLEET_WORKER_ID: worker.workerId,
    FLOWFLEET_BACKEND: worker.backend,
    FLOWFLEET_DRAIN_TIMEOUT_MS: String(worker.drainTimeoutMs),
  };
}
