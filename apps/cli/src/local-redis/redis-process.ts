import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FlowfleetError } from '@flowfleet/errors';
import { freePort } from '../local-fleet/free-port.js';
import { INSTALL_REDIS_HINT, type LocalRedis } from './local-redis.js';
import { pingRedis } from './ping-redis.js';
import { ServiceProcess, describeExit } from '../local-fleet/service-process.js';

/** How to start a redis-server child. */
export interface RedisProcessOptions {
  /** Every output line of the server. */
  readonly onLine?: (line: string) => void;
  /** How long to wait for PING to answer (default 10 s). */
  readonly startTimeoutMs?: number;
  /** The binary (default `redis-server` from PATH). */
  readonly command?: string;
}

const HOST = '127.0.0.1';
const PORT_ATTEMPTS = 3;

function redisArgs(port: number, dir: string): string[] {
  // AOF on (a killed Redis loses nothing), no RDB snapshots, and the only eviction policy the
  // coordinator accepts. Logs go to stdout so the CLI can prefix them.
  return [
    '--port',
    String(port),
    '--bind',
    HOST,
    '--dir',
    dir,
    '--appendonly',
    'yes',
    '--save',
    '',
    '--maxmemory-policy',
    'noeviction',
    '--daemonize',
    'no',
    '--logfile',
    '',
  ];
}

async function waitForPing(server: ServiceProcess, port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    const exit = server.exit;
    if (exit?.error !== undefined && (exit.error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new FlowfleetError(
        'CLI_REDIS_UNAVAILABLE',
        `redis-server is not on PATH: ${INSTALL_REDIS_HINT}`,
        {
          details: { reason: 'ENOENT' },
          cause: exit.error,
        },
      );
    }
    if (exit !== undefined) {
      throw new FlowfleetError(
        'CLI_CHILD_FAILED',
        `redis-server ${describeExit(exit)} during start-up:\n${server.outputTail}`,
        { details: { service: 'redis', port, output: server.outputTail } },
      );
    }
    try {
      last = await pingRedis(HOST, port);
      if (last === '+PONG') return;
    } catch (error) {
      last = (error as Error).message;
    }
    await sleep(25);
  }
  throw new FlowfleetError(
    'CLI_START_TIMEOUT',
    `redis-server on port ${port} did not answer PING within ${timeoutMs} ms (${last})`,
    { details: { what: 'redis-server', timeoutMs, output: server.outputTail } },
  );
}

/**
 * Starts `redis-server` on a free port of 127.0.0.1 in a fresh temp dir (AOF on, `--save ''`,
 * `noeviction`) and resolves once it answers PING. `stop()` shuts it down (SIGTERM, SIGKILL after
 * 10 s) and removes the dir.
 * @throws FlowfleetError CLI_REDIS_UNAVAILABLE (not installed: `details.reason` 'ENOENT'),
 *   CLI_CHILD_FAILED, CLI_START_TIMEOUT
 */
export async function startRedisProcess(options: RedisProcessOptions = {}): Promise<LocalRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'flowfleet-redis-'));
  const timeoutMs = options.startTimeoutMs ?? 10_000;
  try {
    for (let attempt = 1; ; attempt++) {
      const port = await freePort(HOST);
      const server = ServiceProcess.spawn({
        name: 'redis',
        command: options.command ?? 'redis-server',
        args: redisArgs(port, dir),
        ...(options.onLine === undefined ? {} : { onLine: (text) => options.onLine?.(text) }),
      });
      try {
        await waitForPing(server, port, timeoutMs);
      } catch (error) {
        await server.stop(1_000, 'SIGKILL');
        // Another process may take the port between freePort() and redis binding it.
        const portTaken = /Address already in use/i.test(server.outputTail);
        if (portTaken && attempt < PORT_ATTEMPTS) continue;
        throw error;
      }
      let stopped: Promise<void> | undefined;
      return {
        url: `redis://${HOST}:${port}`,
        kind: 'redis-server',
        ...(server.pid === undefined ? {} : { pid: server.pid }),
        stop() {
          stopped ??= (async () => {
            await server.stop(10_000);
            await rm(dir, { recursive: true, force: true });
          })();
          return stopped;
        },
        kill: () => server.kill(),
      };
    }
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
