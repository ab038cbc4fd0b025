/** A Redis the local fleet (or a test, or a bench) uses: one it started (and stops), or one it was given. */
export interface LocalRedis {
  /** `redis://host:port` */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** The server's working directory (AOF lives here) for a child; a scratch dir for a container. */
  readonly dir?: string;
  /** `external` (REDIS_URL / --redis), `redis-server` (a child) or `container` (testcontainers). */
  readonly kind: 'external' | 'redis-server' | 'container';
  /** The redis-server child's current pid (redis-server only; changes on restart). */
  readonly pid?: number;
  /** Stops what was started and removes its temp dir; idempotent; a no-op for external. */
  stop(): Promise<void>;
  /**
   * Sends `signal` (default SIGKILL) to a redis-server child and waits for it to exit; `restart()`
   * brings it back on the same port and dir. Absent for other kinds.
   */
  kill?(signal?: NodeJS.Signals): Promise<void>;
  /** Starts a killed redis-server child again on its port and dir (redis-server only). */
  restart?(): Promise<void>;
}

/** How a Redis is started (both starters honour these). */
export interface LocalRedisOptions {
  /** Append-only file on (default true: a killed Redis loses nothing). */
  readonly appendonly?: boolean;
  /** Default `noeviction`, the only policy the coordinator accepts. */
  readonly maxmemoryPolicy?: string;
  /** How long to wait for the server to answer (default 10 s for a child, 60 s for a container). */
  readonly startTimeoutMs?: number;
}

/** The hint every "no Redis" message carries. */
export const INSTALL_REDIS_HINT =
  'install redis-server (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis), ' +
  'or start a Docker engine (flowfleet then starts a Redis container through testcontainers), ' +
  'or point REDIS_URL / --redis at a Redis whose maxmemory-policy is noeviction';
