import { FlowfleetError } from '@flowfleet/errors';
import { INSTALL_REDIS_HINT, type LocalRedis } from './local-redis.js';

// testcontainers is an optional peer: it is not a dependency of @flowfleet/cli (it pulls in a
// Docker client and is useless without a Docker engine). Installed next to flowfleet
// (`npm i testcontainers@11`; 12.x needs Node 22), it lets `up` run Redis in a container. The
// module name is a variable so TypeScript does not resolve it; the shape used is declared here.

/** The slice of testcontainers' API the CLI uses. */
interface StartedContainer {
  getHost(): string;
  getMappedPort(port: number): number;
  stop(): Promise<unknown>;
}
interface GenericContainerBuilder {
  withCommand(command: string[]): GenericContainerBuilder;
  withExposedPorts(...ports: number[]): GenericContainerBuilder;
  start(): Promise<StartedContainer>;
}
interface TestcontainersModule {
  GenericContainer: new (image: string) => GenericContainerBuilder;
}

const MODULE_NAME = 'testcontainers';
/** The image started when no redis-server is installed. */
export const REDIS_IMAGE = 'redis:7.2-alpine';

async function loadTestcontainers(): Promise<TestcontainersModule | undefined> {
  try {
    const loaded = (await import(MODULE_NAME)) as Partial<TestcontainersModule>;
    return typeof loaded.GenericContainer === 'function'
      ? (loaded as TestcontainersModule)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts Redis in a container through testcontainers (AOF on, `noeviction`).
 * @throws FlowfleetError CLI_REDIS_UNAVAILABLE when testcontainers is not installed or no
 *   container runtime answers (testcontainers fails fast without a Docker engine)
 */
export async function startRedisContainer(): Promise<LocalRedis> {
  const testcontainers = await loadTestcontainers();
  if (testcontainers === undefined) {
    throw new FlowfleetError(
      'CLI_REDIS_UNAVAILABLE',
      `no Redis: REDIS_URL is unset, redis-server is not on PATH and testcontainers is not installed. Fix: ${INSTALL_REDIS_HINT}`,
      { details: { reason: 'no-redis-server-no-testcontainers' } },
    );
  }
  let container: StartedContainer;
  try {
    container = await new testcontainers.GenericContainer(REDIS_IMAGE)
      .withCommand([
        'redis-server',
        '--appendonly',
        'yes',
        '--save',
        '',
        '--maxmemory-policy',
        'noeviction',
      ])
      .withExposedPorts(6379)
      .start();
  } catch (cause) {
    throw new FlowfleetError(
      'CLI_REDIS_UNAVAILABLE',
      `no Redis: redis-server is not on PATH and a Redis container could not start (${(cause as Error).message}). Fix: ${INSTALL_REDIS_HINT}`,
      { details: { reason: 'container-failed' }, cause },
    );
  }
  let stopped: Promise<void> | undefined;
  return {
    url: `redis://${container.getHost()}:${container.getMappedPort(6379)}`,
    kind: 'container',
    stop() {
      stopped ??= container.stop().then(() => undefined);
      return stopped;
    },
  };
}
