import { parseRedisUrl, parseSentinelUrl } from '@flowfleet/redis';
import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import { chooseRedisStarterOnce, type RedisChoice } from './choose-redis.js';
import { INSTALL_REDIS_HINT, type LocalRedis } from './local-redis.js';
import { startRedisContainer } from './redis-container.js';
import { startRedisProcess, type RedisProcessOptions } from './redis-process.js';

/** Where a throwaway Redis comes from. */
export interface ResolveRedisOptions extends RedisProcessOptions {
  /** `--redis` or `REDIS_URL`: used as is, never stopped. */
  readonly url?: string;
  /**
   * `auto` (default): the chooser decides (a container when a container engine answers, else a
   * redis-server child). `redis-server` or `container` skip it, e.g. for a test that kills and
   * restarts its server (only a child keeps its port across a restart).
   */
  readonly starter?: 'auto' | 'redis-server' | 'container';
  /** Told the chooser's decision, once per call that consults it (the CLI logs it). */
  readonly onChoice?: (choice: RedisChoice) => void;
}

/**
 * Where an external REDIS_URL points: its host and port, or for a Sentinel URL (several hosts and
 * a master name, FLOWFLEET_REDIS_MODE=sentinel) its first sentinel.
 * @throws FlowfleetError REDIS_URL_INVALID when it is neither
 */
function externalAddress(url: string): { host: string; port: number } {
  if (!url.includes(',')) {
    const parsed = parseRedisUrl(url);
    return { host: parsed.hostname.replace(/^\[|\]$/g, ''), port: Number(parsed.port || 6379) };
  }
  const first = parseSentinelUrl(url).sentinels[0]!;
  return { host: first.host, port: first.port };
}

/**
 * A throwaway Redis for the CLI's `up`, the test harness and the benches: a given URL as is;
 * otherwise what `chooseRedisStarter` picks (cached per process) — a container through
 * `@testcontainers/redis`, or a `redis-server` child on a free port. A container that fails to
 * start falls back to a child.
 * @throws FlowfleetError CLI_REDIS_UNAVAILABLE naming how to install Redis; CLI_CHILD_FAILED,
 *   CLI_START_TIMEOUT when redis-server is installed but does not come up
 */
export async function resolveRedis(options: ResolveRedisOptions = {}): Promise<LocalRedis> {
  if (options.url !== undefined) {
    const { host, port } = externalAddress(options.url);
    return {
      url: options.url,
      host,
      port,
      kind: 'external',
      stop: () => Promise.resolve(),
    };
  }
  const starter = options.starter ?? 'auto';
  let useContainer = starter === 'container';
  if (starter === 'auto') {
    const choice = await chooseRedisStarterOnce();
    options.onChoice?.(choice);
    useContainer = choice.starter === 'container';
  }
  if (useContainer) {
    try {
      return await startRedisContainer(options);
    } catch (error) {
      if (starter === 'container') throw error;
      // The engine answered the probe but the container did not come up: a child still may.
    }
  }
  try {
    return await startRedisProcess(options);
  } catch (error) {
    const notInstalled =
      isFlowfleetError(error, 'CLI_REDIS_UNAVAILABLE') &&
      (error.details as { reason?: unknown } | undefined)?.reason === 'ENOENT';
    if (!notInstalled) throw error;
    throw new FlowfleetError(
      'CLI_REDIS_UNAVAILABLE',
      `no Redis: REDIS_URL is unset, redis-server is not on PATH and ${useContainer ? 'the Redis container did not start' : 'no container runtime answered'}. Fix: ${INSTALL_REDIS_HINT}`,
      { details: { reason: 'no-redis-server-no-container' }, cause: error },
    );
  }
}
