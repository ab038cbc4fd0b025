import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FlowfleetError } from '@flowfleet/errors';
import { INSTALL_REDIS_HINT, type LocalRedis, type LocalRedisOptions } from './local-redis.js';

/** The image started by the container path. */
export const REDIS_IMAGE = 'redis:7.2-alpine';

/**
 * Starts Redis in a container through `@testcontainers/redis` (a real dependency; it needs a
 * container engine, which `chooseRedisStarter` probes first): `--save ''`, AOF as asked (default
 * on), the asked `maxmemory-policy` (default `noeviction`). `stop()` removes the container.
 * @throws FlowfleetError CLI_REDIS_UNAVAILABLE when no container could start
 */
export async function startRedisContainer(options: LocalRedisOptions = {}): Promise<LocalRedis> {
  const { RedisContainer } = await import('@testcontainers/redis');
  const dir = await mkdtemp(join(tmpdir(), 'flowfleet-redis-container-'));
  let container: Awaited<ReturnType<InstanceType<typeof RedisContainer>['start']>>;
  try {
    container = await new RedisContainer(REDIS_IMAGE)
      .withCommand([
        'redis-server',
        '--appendonly',
        options.appendonly === false ? 'no' : 'yes',
        '--save',
        '',
        '--maxmemory-policy',
        options.maxmemoryPolicy ?? 'noeviction',
      ])
      .withStartupTimeout(options.startTimeoutMs ?? 60_000)
      .start();
  } catch (cause) {
    await rm(dir, { recursive: true, force: true });
    throw new FlowfleetError(
      'CLI_REDIS_UNAVAILABLE',
      `a Redis container could not start (${(cause as Error).message}). Fix: ${INSTALL_REDIS_HINT}`,
      { details: { reason: 'container-failed' }, cause },
    );
  }
  const host = container.getHost();
  const port = container.getPort();
  let stopped: Promise<void> | undefined;
  return {
    url: `redis://${host}:${port}`,
    host,
    port,
    dir,
    kind: 'container',
    stop() {
      stopped ??= (async () => {
        try {
          await container.stop();
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      })();
      return stopped;
    },
  };
}
