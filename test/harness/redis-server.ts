import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sendCommand } from './resp.js';

/** How to start a throwaway Redis. */
export interface RedisServerOptions {
  /** Turn on the append-only file (needed for data to survive a kill). Default false. */
  readonly appendonly?: boolean;
  /** Default `noeviction`, the only policy the coordinator accepts. */
  readonly maxmemoryPolicy?: string;
  /** Working directory (AOF lives here); default a fresh temp dir, removed by `stop()`. */
  readonly dir?: string;
  /** How long to wait for PING to answer. Default 10 s. */
  readonly startTimeoutMs?: number;
  /**
   * The address to bind (default 127.0.0.1): a test network namespace's address, together with
   * `command` (e.g. `['ip', 'netns', 'exec', ns]`) and `port` (any port is free inside a fresh
   * namespace). Such a server is checked through `unixSocket`, not over TCP.
   */
  readonly host?: string;
  /** A fixed port (default: a free one on loopback). */
  readonly port?: number;
  /** The argv that runs redis-server (default none): the wrapper runs `redis-server` plus its args. */
  readonly command?: readonly string[];
  /** Also listen on this Unix socket (reachable from any namespace): PING goes there. */
  readonly unixSocket?: string;
}

/** A running (or killed, restartable) redis-server child. */
export interface RedisServer {
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly dir: string;
  /** The Unix socket it also listens on, if asked to. */
  readonly unixSocket: string | undefined;
  /** The current child's pid (changes on restart). */
  readonly pid: number;
  /** Shut the server down for good (SIGTERM, then SIGKILL after 5 s) and remove its own temp dir. Idempotent. */
  stop(): Promise<void>;
  /** Send `signal` (default SIGKILL) and wait for the process to exit; `restart()` brings it back. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Start again on the same port and dir (after `kill`; kills first if still running). */
  restart(): Promise<void>;
}

const HOST = '127.0.0.1';
const OUTPUT_TAIL_CHARS = 4_000;

/** A port that was free a moment ago (bind port 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

let prefixCounter = 0;

/** A key prefix unique to this test run, process and call: `t-<name>-<pid>-<n>-<random>`. */
export function uniquePrefix(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 32);
  prefixCounter += 1;
  return `t-${slug || 'test'}-${process.pid}-${prefixCounter}-${randomBytes(3).toString('hex')}`;
}

interface Child {
  readonly process: ChildProcess;
  readonly exited: Promise<void>;
  output: string;
  /** Set when the process could not be spawned (e.g. ENOENT). */
  error?: Error;
}

function spawnRedis(port: number, dir: string, options: RedisServerOptions): Child {
  const args = [
    '--port',
    String(port),
    '--bind',
    options.host ?? HOST,
    // Off the loopback, Redis refuses password-less clients unless told they are trusted: a
    // namespace address is reachable only from the test's own network.
    ...(options.host === undefined ? [] : ['--protected-mode', 'no']),
    ...(options.unixSocket === undefined
      ? []
      : ['--unixsocket', options.unixSocket, '--unixsocketperm', '700']),
    '--save',
    '',
    '--dir',
    dir,
    '--appendonly',
    options.appendonly === true ? 'yes' : 'no',
    '--maxmemory-policy',
    options.maxmemoryPolicy ?? 'noeviction',
    '--daemonize',
    'no',
    '--logfile',
    '',
  ];
  const [wrapper, ...wrapperArgs] = [...(options.command ?? []), 'redis-server'];
  const proc = spawn(wrapper ?? 'redis-server', [...wrapperArgs, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const child: Child = {
    process: proc,
    output: '',
    exited: new Promise((resolve) => {
      proc.once('close', () => resolve());
      proc.once('error', () => {
        if (proc.pid === undefined) resolve(); // never spawned: there will be no exit
      });
    }),
  };
  const keep = (chunk: Buffer): void => {
    child.output = (child.output + chunk.toString()).slice(-OUTPUT_TAIL_CHARS);
  };
  proc.on('error', (error) => (child.error = error));
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  return child;
}

async function waitForPing(
  child: Child,
  port: number,
  timeoutMs: number,
  unixSocket?: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    const spawnError = child.error;
    if (spawnError !== undefined) {
      const missing = (spawnError as NodeJS.ErrnoException).code === 'ENOENT';
      throw new Error(
        missing
          ? 'redis-server is not on PATH: install redis-server (apt-get install redis-server)'
          : `redis-server failed to start: ${spawnError.message}`,
        { cause: spawnError },
      );
    }
    if (child.process.exitCode !== null || child.process.signalCode !== null) {
      throw new Error(`redis-server exited during start-up:\n${child.output}`);
    }
    try {
      const reply = await sendCommand({ host: HOST, port, path: unixSocket }, ['PING'], 500);
      if (reply === 'PONG') return;
      last = JSON.stringify(reply); // e.g. -LOADING while the AOF is replayed
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  child.process.kill('SIGKILL');
  throw new Error(
    `redis-server on port ${port} did not answer PING within ${timeoutMs} ms (${last}):\n${child.output}`,
  );
}

async function killAndWait(child: Child, signal: NodeJS.Signals): Promise<void> {
  if (child.process.exitCode === null && child.process.signalCode === null)
    child.process.kill(signal);
  await child.exited;
}

/**
 * Starts `redis-server` on a free port with `--save ''` in its own temp dir and resolves once it
 * answers PING. Never touches a Redis it did not start (in particular not the one on 6379).
 * @throws Error when redis-server is not installed or does not come up in time
 */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'flowfleet-redis-')));
  const timeoutMs = options.startTimeoutMs ?? 10_000;

  // Another process may take the port between freePort() and redis binding it: retry a few times.
  let port = 0;
  let child: Child | undefined;
  for (let attempt = 0; child === undefined; attempt++) {
    port = options.port ?? (await freePort());
    const candidate = spawnRedis(port, dir, options);
    try {
      await waitForPing(candidate, port, timeoutMs, options.unixSocket);
      child = candidate;
    } catch (error) {
      await killAndWait(candidate, 'SIGKILL');
      const portTaken = /Address already in use/i.test(candidate.output);
      if (!portTaken || attempt >= 2) {
        if (ownDir) await rm(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }

  let current: Child = child;
  let stopped: Promise<void> | undefined;
  const host = options.host ?? HOST;
  return {
    url: `redis://${host}:${port}`,
    host,
    port,
    dir,
    unixSocket: options.unixSocket,
    get pid() {
      return current.process.pid ?? -1;
    },
    stop() {
      stopped ??= (async () => {
        const graceful = setTimeout(() => current.process.kill('SIGKILL'), 5_000);
        try {
          await killAndWait(current, 'SIGTERM');
        } finally {
          clearTimeout(graceful);
          if (ownDir) await rm(dir, { recursive: true, force: true });
        }
      })();
      return stopped;
    },
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      await killAndWait(current, signal);
    },
    async restart() {
      if (stopped !== undefined) throw new Error('restart() after stop(): start a new server');
      await killAndWait(current, 'SIGKILL');
      const next = spawnRedis(port, dir, options);
      current = next;
      await waitForPing(next, port, timeoutMs, options.unixSocket);
    },
  };
}
