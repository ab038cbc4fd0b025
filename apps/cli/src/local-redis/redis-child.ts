import { setTimeout as sleep } from 'node:timers/promises';
import { FlowfleetError } from '@flowfleet/errors';
import { ServiceProcess, describeExit } from '../local-fleet/service-process.js';
import { INSTALL_REDIS_HINT } from './local-redis.js';
import { pingRedis } from './ping-redis.js';

/** What one redis-server child of a local cluster or sentinel set is. */
export interface RedisChildSpec {
  /** For messages: `cluster node`, `sentinel`, `replica`. */
  readonly what: string;
  readonly host: string;
  readonly port: number;
  readonly args: readonly string[];
  /** The server binary (default `redis-server`). */
  readonly command?: string;
}

/**
 * Spawns `redis-server <args>` and resolves once it answers PING on `host:port`.
 * @throws FlowfleetError CLI_REDIS_UNAVAILABLE (no redis-server), CLI_CHILD_FAILED (it exited),
 *   CLI_START_TIMEOUT (no PONG before `deadline`); the child is stopped on any of them
 */
export async function startRedisChild(
  spec: RedisChildSpec,
  deadline: number,
): Promise<ServiceProcess> {
  const server = ServiceProcess.spawn({
    name: `redis-${spec.port}`,
    command: spec.command ?? 'redis-server',
    args: spec.args,
  });
  try {
    await untilPong(server, spec, deadline);
    return server;
  } catch (error) {
    await server.stop(5_000, 'SIGKILL');
    throw error;
  }
}

async function untilPong(
  server: ServiceProcess,
  spec: RedisChildSpec,
  deadline: number,
): Promise<void> {
  let last = 'no answer';
  while (Date.now() < deadline) {
    const exit = server.exit;
    if (exit?.error !== undefined && (exit.error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new FlowfleetError(
        'CLI_REDIS_UNAVAILABLE',
        `redis-server is not on PATH: ${INSTALL_REDIS_HINT}`,
        { details: { reason: 'ENOENT' }, cause: exit.error },
      );
    }
    if (exit !== undefined) {
      throw new FlowfleetError(
        'CLI_CHILD_FAILED',
        `${spec.what} on port ${spec.port} ${describeExit(exit)} during start-up:\n${server.outputTail}`,
        { details: { service: 'redis', port: spec.port, output: server.outputTail } },
      );
    }
    try {
      last = await pingRedis(spec.host, spec.port);
      if (last === '+PONG') return;
    } catch (error) {
      last = (error as Error).message;
    }
    await sleep(25);
  }
  throw new FlowfleetError(
    'CLI_START_TIMEOUT',
    `${spec.what} on port ${spec.port} did not answer PING in time (${last})`,
    { details: { what: spec.what, port: spec.port, output: server.outputTail } },
  );
}
