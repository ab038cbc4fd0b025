import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FlowfleetError } from '@flowfleet/errors';
import { freePort } from '../local-fleet/free-port.js';
import { INSTALL_REDIS_HINT, type LocalRedis, type LocalRedisOptions } from './local-redis.js';
import { pingRedis } from './ping-redis.js';
import { ServiceProcess, describeExit } from '../local-fleet/service-process.js';

/** How to start a redis-server child. */
export interface RedisProcessOptions extends LocalRedisOptions {
  /** Every output line of the server. */
  readonly onLine?: (line: string) => void;
  /** The binary (default `redis-server` from PATH). */
  readonly command?: string;
  /** Working directory (AOF lives here); default a fresh temp dir, removed by `stop()`. */
  readonly dir?: string;
  /**
   * The address to bind (default 127.0.0.1), e.g. a test network namespace's address, together
   * with `wrapper` (e.g. `['ip', 'netns', 'exec', ns]`) and `port`. Off the loopback protected
   * mode is off: such an address is reachable only from the test's own network.
   */
  readonly host?: string;
  /** A fixed port (default: a free one on loopback; any port is free in a fresh namespace). */
  readonly port?: number;
  /** An argv the server runs under (the wrapper then runs `command` and its arguments). */
  readonly wrapper?: readonly string[];
  /** Also listen on this Unix socket (reachable from any namespace); PING goes there. */
  readonly unixSocket?: string;
  /** More server arguments, after the defaults (e.g. `['--maxclients', '20000']`). */
  readonly extraArgs?: readonly string[];
}

const HOST = '127.0.0.1';
const PORT_ATTEMPTS = 3;

function redisArgs(port: number, dir: string, options: RedisProcessOptions): string[] {
  // AOF on by default (a killed Redis loses nothing), no RDB snapshots, and by default the only
  // eviction policy the coordinator accepts. Logs go to stdout so the CLI can prefix them.
  return [
    '--port',
    String(port),
    '--bind',
    options.host ?? HOST,
    ...(options.host === undefined ? [] : ['--protected-mode', 'no']),
    ...(options.unixSocket === undefined
      ? []
      : ['--unixsocket', options.unixSocket, '--unixsocketperm', '700']),
    '--dir',
    dir,
    '--appendonly',
    options.appendonly === false ? 'no' : 'yes',
    '--save',
    '',
    '--maxmemory-policy',
    options.maxmemoryPolicy ?? 'noeviction',
    '--daemonize',
    'no',
    '--logfile',
    '',
    ...(options.extraArgs ?? []),
  ];
}

async function waitForPing(
  server: ServiceProcess,
  port: number,
  timeoutMs: number,
  unixSocket?: string,
): Promise<void> {
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
      last = await pingRedis(HOST, port, 500, unixSocket);
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

function spawnServer(port: number, dir: string, options: RedisProcessOptions): ServiceProcess {
  const [command, ...prefix] = [...(options.wrapper ?? []), options.command ?? 'redis-server'];
  return ServiceProcess.spawn({
    name: 'redis',
    command: command ?? 'redis-server',
    args: [...prefix, ...redisArgs(port, dir, options)],
    ...(options.onLine === undefined ? {} : { onLine: (text) => options.onLine?.(text) }),
  });
}

/**
 * Starts `redis-server` on a free port of 127.0.0.1 in a fresh temp dir (or `options.dir`; AOF
 * on unless `appendonly: false`, `--save ''`, `noeviction` unless told) and resolves once it
 * answers PING. `stop()` shuts it down (SIGTERM, SIGKILL after 10 s) and removes its own dir;
 * `kill()` and `restart()` stop it and bring it back on the same port and dir.
 * @throws FlowfleetError CLI_REDIS_UNAVAILABLE (not installed: `details.reason` 'ENOENT'),
 *   CLI_CHILD_FAILED, CLI_START_TIMEOUT
 */
export async function startRedisProcess(options: RedisProcessOptions = {}): Promise<LocalRedis> {
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'flowfleet-redis-')));
  const timeoutMs = options.startTimeoutMs ?? 10_000;
  try {
    for (let attempt = 1; ; attempt++) {
      const port = options.port ?? (await freePort(HOST));
      let server = spawnServer(port, dir, options);
      try {
        await waitForPing(server, port, timeoutMs, options.unixSocket);
      } catch (error) {
        await server.stop(1_000, 'SIGKILL');
        // Another process may take the port between freePort() and redis binding it.
        const portTaken = /Address already in use/i.test(server.outputTail);
        if (portTaken && attempt < PORT_ATTEMPTS) continue;
        throw error;
      }
      let stopped: Promise<void> | undefined;
      const host = options.host ?? HOST;
      return {
        url: `redis://${host}:${port}`,
        host,
        port,
        dir,
        kind: 'redis-server',
        get pid() {
          return server.pid ?? -1;
        },
        stop() {
          stopped ??= (async () => {
            await server.stop(10_000);
            if (ownDir) await rm(dir, { recursive: true, force: true });
          })();
          return stopped;
        },
        async kill(signal: NodeJS.Signals = 'SIGKILL') {
          await server.stop(5_000, signal);
        },
        async restart() {
          if (stopped !== undefined) throw new Error('restart() after stop(): start a new server');
          await server.stop(5_000, 'SIGKILL');
          server = spawnServer(port, dir, options);
          await waitForPing(server, port, timeoutMs, options.unixSocket);
        },
      };
    }
  } catch (error) {
    if (ownDir) await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
