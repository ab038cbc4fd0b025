// A throwaway Redis for the bench scripts through the one chooser (`@flowfleet/cli/local-redis`:
// a container when a container engine answers, else a redis-server child on a free port), no
// persistence, `noeviction` (the coordinator refuses anything else), and a synchronous SIGKILL of
// a child on process exit as the last resort. The choice is printed once per process.
import { describeRedisChoice, resolveRedis } from '@flowfleet/cli/local-redis';
import { Redis } from 'ioredis';

/** A running throwaway Redis. */
export interface BenchRedis {
  /** `redis://host:port` */
  readonly url: string;
  /** The redis-server child's pid (-1 for a container). */
  readonly pid: number;
  /** `redis_version` of the server that runs. */
  readonly version: string;
  /** Stops it and removes its temp dir. Idempotent. */
  stop(): Promise<void>;
}

async function serverVersion(url: string): Promise<string> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return /^redis_version:(\S+)/m.exec(await probe.info('server'))?.[1] ?? 'unknown';
  } finally {
    probe.disconnect();
  }
}

/**
 * Starts a throwaway Redis and resolves once it answers; `extraArgs` go after a redis-server
 * child's defaults (e.g. `['--maxclients', '20000']`), and then it is always a child.
 * @throws FlowfleetError CLI_REDIS_UNAVAILABLE (no redis-server, no container engine),
 *   CLI_CHILD_FAILED, CLI_START_TIMEOUT
 */
export async function startBenchRedis(extraArgs: readonly string[] = []): Promise<BenchRedis> {
  const redis = await resolveRedis({
    appendonly: false,
    ...(extraArgs.length === 0 ? {} : { starter: 'redis-server' as const, extraArgs }),
    onChoice: (choice) => console.error(`bench: ${describeRedisChoice(choice)}`),
  });
  // Last resort when the script dies without running its teardown.
  const killOnExit = (): void => void redis.kill?.('SIGKILL');
  process.on('exit', killOnExit);
  let version: string;
  try {
    version = await serverVersion(redis.url);
  } catch (error) {
    process.off('exit', killOnExit);
    await redis.stop();
    throw error;
  }
  let stopped: Promise<void> | undefined;
  return {
    url: redis.url,
    pid: redis.pid ?? -1,
    version,
    stop() {
      stopped ??= (async () => {
        await redis.stop();
        process.off('exit', killOnExit);
      })();
      return stopped;
    },
  };
}
