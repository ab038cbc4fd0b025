import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { resolveRedis } from '@flowfleet/cli/local-redis';

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
  /** Default `auto` (the chooser); `redis-server` where a test kills and restarts its server. */
  readonly starter?: 'auto' | 'redis-server' | 'container';
  /**
   * The address to bind (default 127.0.0.1): a test network namespace's address, together with
   * `command` (e.g. `['ip', 'netns', 'exec', ns]`) and `port` (any port is free inside a fresh
   * namespace). Such a server is checked through `unixSocket`, not over TCP. Any of these
   * options means a redis-server child.
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

/**
 * Starts a throwaway Redis through the one chooser (`@flowfleet/cli/local-redis`): a Redis
 * container through @testcontainers/redis when a container engine answers (the vitest global
 * set-up probes once per run and prints the choice), else `redis-server` on a free port with
 * `--save ''` in its own temp dir. Resolves once it answers PING. Never touches a Redis it did
 * not start (in particular not the one on 6379). `kill()`/`restart()` need a redis-server child
 * (a container's port changes on restart): pass `starter: 'redis-server'` where a test uses them.
 * @throws Error when redis-server is not installed or does not come up in time
 */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  // A given dir or a network placement means a local child.
  const child =
    options.dir !== undefined ||
    options.host !== undefined ||
    options.port !== undefined ||
    options.command !== undefined ||
    options.unixSocket !== undefined;
  const redis = await resolveRedis({
    starter: child ? 'redis-server' : (options.starter ?? 'auto'),
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.port === undefined ? {} : { port: options.port }),
    ...(options.command === undefined ? {} : { wrapper: options.command }),
    ...(options.unixSocket === undefined ? {} : { unixSocket: options.unixSocket }),
    appendonly: options.appendonly === true,
    ...(options.maxmemoryPolicy === undefined ? {} : { maxmemoryPolicy: options.maxmemoryPolicy }),
    ...(options.dir === undefined ? {} : { dir: options.dir }),
    ...(options.startTimeoutMs === undefined ? {} : { startTimeoutMs: options.startTimeoutMs }),
  });
  const needsChild = (what: string): never => {
    throw new Error(`${what}() needs a redis-server child: start it with starter: 'redis-server'`);
  };
  return {
    url: redis.url,
    host: redis.host,
    port: redis.port,
    dir: redis.dir ?? '',
    unixSocket: options.unixSocket,
    get pid() {
      return redis.pid ?? -1;
    },
    stop: () => redis.stop(),
    kill: (signal?: NodeJS.Signals) => (redis.kill ?? (() => needsChild('kill')))(signal),
    restart: () => (redis.restart ?? (() => needsChild('restart')))(),
  };
}
