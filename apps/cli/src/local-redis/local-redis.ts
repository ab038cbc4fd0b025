/** A Redis the local fleet uses: one it started (and stops), or one it was given. */
export interface LocalRedis {
  /** `redis://host:port` */
  readonly url: string;
  /** `external` (REDIS_URL / --redis), `redis-server` (a child) or `container` (testcontainers). */
  readonly kind: 'external' | 'redis-server' | 'container';
  /** The redis-server child's pid (redis-server only). */
  readonly pid?: number;
  /** Stops what this CLI started and removes its temp dir; idempotent; a no-op for external. */
  stop(): Promise<void>;
  /** SIGKILLs a redis-server child at once (a second Ctrl-C); absent for other kinds. */
  kill?(): void;
}

/** The hint every "no Redis" message carries. */
export const INSTALL_REDIS_HINT =
  'install redis-server (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis), ' +
  'or start a Docker engine (then `npm i testcontainers@11` lets flowfleet start a Redis container), ' +
  'or point REDIS_URL / --redis at a Redis whose maxmemory-policy is noeviction';
