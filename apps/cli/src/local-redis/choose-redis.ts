import { performance } from 'node:perf_hooks';
import { FlowfleetError } from '@flowfleet/errors';

/** How a throwaway Redis is started: a testcontainers container, or a `redis-server` child. */
export type RedisStarter = 'container' | 'redis-server';

/** What the chooser decided, and why. */
export interface RedisChoice {
  readonly starter: RedisStarter;
  /** One line: the runtime that answered, or why none did, or the variable that decided. */
  readonly reason: string;
  /** How long the container-runtime probe took (0 when it did not run). */
  readonly probeMs: number;
}

/**
 * Decides for every process that inherits it (`container` | `redis-server`): the vitest global
 * set-up writes its answer here, so test workers never probe again; a user may set it to skip the
 * probe.
 */
export const REDIS_STARTER_ENV = 'FLOWFLEET_REDIS_STARTER';
/** The probe's bound: a Docker host that does not answer must not stall a test run. */
export const DEFAULT_PROBE_TIMEOUT_MS = 5_000;

/** What the chooser reads (defaults: process.env, the bound above). */
export interface ChooseRedisOptions {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly probeTimeoutMs?: number;
}

/**
 * Asks testcontainers' own runtime-strategy probe (`getContainerRuntimeClient`: DOCKER_HOST,
 * ~/.testcontainers.properties, the Docker socket, rootless and Colima sockets…) whether a
 * container engine answers, bounded by `timeoutMs`. Resolves with the runtime's description, or
 * rejects with why not.
 */
export async function probeContainerRuntime(timeoutMs = DEFAULT_PROBE_TIMEOUT_MS): Promise<string> {
  const { getContainerRuntimeClient } = await import('testcontainers');
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no container runtime answered within ${timeoutMs} ms`)),
      timeoutMs,
    );
    timer.unref();
  });
  try {
    const client = await Promise.race([getContainerRuntimeClient(), timeout]);
    const { serverVersion, operatingSystem } = client.info.containerRuntime;
    return `${client.info.containerRuntime.host} (server ${serverVersion}, ${operatingSystem})`;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The one chooser of how to start a throwaway Redis (tests, benches, the CLI's `up`): the
 * container when a container engine answers testcontainers' probe, else a `redis-server` child.
 * `FLOWFLEET_REDIS_STARTER` decides without probing.
 * @throws FlowfleetError CLI_USAGE when FLOWFLEET_REDIS_STARTER is set to anything else
 */
export async function chooseRedisStarter(options: ChooseRedisOptions = {}): Promise<RedisChoice> {
  const env = options.env ?? process.env;
  const forced = env[REDIS_STARTER_ENV];
  if (forced !== undefined && forced !== '') {
    if (forced !== 'container' && forced !== 'redis-server') {
      throw new FlowfleetError(
        'CLI_USAGE',
        `${REDIS_STARTER_ENV} must be container or redis-server, got ${JSON.stringify(forced)}`,
        { details: { variable: REDIS_STARTER_ENV, value: forced } },
      );
    }
    return { starter: forced, reason: `${REDIS_STARTER_ENV}=${forced}`, probeMs: 0 };
  }
  const started = performance.now();
  try {
    const runtime = await probeContainerRuntime(options.probeTimeoutMs);
    return {
      starter: 'container',
      reason: `container runtime at ${runtime}`,
      probeMs: Math.round(performance.now() - started),
    };
  } catch (error) {
    return {
      starter: 'redis-server',
      reason: `no container runtime (${(error as Error).message})`,
      probeMs: Math.round(performance.now() - started),
    };
  }
}

let cached: Promise<RedisChoice> | undefined;

/** `chooseRedisStarter()` once per process (process.env, default bound); later calls share it. */
export function chooseRedisStarterOnce(): Promise<RedisChoice> {
  cached ??= chooseRedisStarter();
  return cached;
}

/** The one line a log shows for a choice. */
export function describeRedisChoice(choice: RedisChoice): string {
  const how =
    choice.starter === 'container'
      ? 'a Redis container (@testcontainers/redis)'
      : 'a redis-server child';
  const probe = choice.probeMs > 0 ? `; probe ${choice.probeMs} ms` : '';
  return `Redis: ${how} — ${choice.reason}${probe}`;
}
