import { FlowfleetError } from '@flowfleet/errors';
import { Cluster, Redis, type ClusterNode, type RedisOptions } from 'ioredis';
import type { RedisMode } from './redis-mode.js';
import { trackConnections as tracked } from './connection-generation.js';
import { parseSentinelUrl } from './sentinel-url.js';

/**
 * A connection of any mode: ioredis `Redis` (one server, or the current master of a Sentinel
 * group) or `Cluster` (every master).
 */
export type RedisClient = Redis | Cluster;

/** How one connection is made. */
export interface RedisConnectOptions {
  /**
   * `standalone` (default), `cluster` (then the URL names any seed node) or `sentinel` (then the
   * URL lists sentinels and names the master group; see `parseSentinelUrl`).
   */
  readonly mode?: RedisMode;
  /** `CLIENT SETNAME` of the connection (of each node's connection on a cluster). */
  readonly connectionName?: string;
  /** Connect only on `connect()` (default false: at once, as ioredis does). */
  readonly lazyConnect?: boolean;
  /** ioredis's per-command retry bound; `null` (what BullMQ needs) keeps commands queued. */
  readonly maxRetriesPerRequest?: number | null;
  /** Delay before reconnect attempt `attempt` (ms), or null to give up (the cluster's too). */
  readonly retryStrategy?: (attempt: number) => number | null;
  /**
   * Fail a command that has no answer after this long (ms; default none): a silent partition
   * then surfaces as an error instead of a hang. Not for connections whose reads block on purpose.
   */
  readonly commandTimeout?: number;
  /** Give up a connection attempt after this long (ms; ioredis's default 10 s). */
  readonly connectTimeout?: number;
}

/**
 * How long a cluster client waits for a node's `CLUSTER SLOTS` answer before trying the next
 * node (ioredis's default is 1 s): ioredis's own connect timeout. A first connect whose only
 * seed answers later fails outright ("None of startup nodes is available"), and a fleet that
 * reconnects at once (every worker after a cluster restart) queues its connects and slot reads
 * on the seed for longer than 1 s — retrying them only adds to the queue.
 */
export const CLUSTER_SLOTS_REFRESH_TIMEOUT_MS = 10_000;

/** True for a Redis Cluster connection. */
export function isCluster(client: RedisClient): client is Cluster {
  return client instanceof Cluster;
}

type SeedOptions = Pick<RedisOptions, 'username' | 'password' | 'tls'>;

/** The seed node and the options every node connection shares, from a cluster URL. */
function clusterSeed(url: string): { nodes: ClusterNode[]; redisOptions: SeedOptions } {
  const parsed = parseRedisUrl(url);
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  return {
    nodes: [{ host, port: parsed.port === '' ? 6379 : Number(parsed.port) }],
    redisOptions: {
      ...(parsed.username === '' ? {} : { username: decodeURIComponent(parsed.username) }),
      ...(parsed.password === '' ? {} : { password: decodeURIComponent(parsed.password) }),
      ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
    },
  };
}

/**
 * `url` parsed as `redis://[user:password@]host[:port]` or `rediss://…`.
 * @throws FlowfleetError REDIS_URL_INVALID
 */
export function parseRedisUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (cause) {
    throw invalidUrl(url, 'not a URL', cause);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw invalidUrl(url, `scheme ${parsed.protocol} is not redis: or rediss:`);
  }
  if (parsed.hostname === '') throw invalidUrl(url, 'no host');
  return parsed;
}

function invalidUrl(url: string, reason: string, cause?: unknown): FlowfleetError {
  let shown = '(unparseable url)';
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    shown = parsed.toString();
  } catch {
    // keep the placeholder: the text may hold a password
  }
  return new FlowfleetError('REDIS_URL_INVALID', `REDIS_URL ${shown}: ${reason}`, {
    details: { url: shown, reason },
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * A write refused by a demoted master (`READONLY`: the old master came back as a replica, or a
 * manual failover): reconnect (through the sentinels, to the new master) and resend the command.
 * Nothing of a refused command was applied, so the resend is safe.
 */
function reconnectOnReadonly(error: Error): 2 | false {
  return error.message.startsWith('READONLY') ? 2 : false;
}

/**
 * The one place a flowfleet app opens a Redis connection. `standalone`: an ioredis `Redis` on
 * `url`. `cluster`: an ioredis `Cluster` seeded from `url` (any node; it discovers the others and
 * follows MOVED/ASK), reading and writing on masters only, waiting up to
 * {@link CLUSTER_SLOTS_REFRESH_TIMEOUT_MS} for a slot map. `sentinel`: an ioredis `Redis` on the
 * master the sentinels name (asked again on every reconnect: a dead master drops the connection,
 * a demoted live one answers `READONLY`, which reconnects and resends). BullMQ accepts any of them
 * as `connection`.
 * @throws FlowfleetError REDIS_URL_INVALID when a cluster or sentinel URL cannot be parsed
 */
export function createRedis(url: string, options: RedisConnectOptions = {}): RedisClient {
  const common = {
    ...(options.connectionName === undefined ? {} : { connectionName: options.connectionName }),
    ...(options.maxRetriesPerRequest === undefined
      ? {}
      : { maxRetriesPerRequest: options.maxRetriesPerRequest }),
    ...(options.commandTimeout === undefined ? {} : { commandTimeout: options.commandTimeout }),
    ...(options.connectTimeout === undefined ? {} : { connectTimeout: options.connectTimeout }),
  };
  const lazy = options.lazyConnect === undefined ? {} : { lazyConnect: options.lazyConnect };
  const retry = options.retryStrategy;
  if ((options.mode ?? 'standalone') === 'standalone') {
    return tracked(
      new Redis(url, {
        ...common,
        ...lazy,
        ...(retry === undefined ? {} : { retryStrategy: retry }),
      }),
    );
  }
  if (options.mode === 'sentinel') {
    const target = parseSentinelUrl(url);
    return tracked(
      new Redis({
        sentinels: target.sentinels.map((sentinel) => ({ ...sentinel })),
        name: target.name,
        role: 'master',
        ...(target.username === undefined ? {} : { username: target.username }),
        ...(target.password === undefined ? {} : { password: target.password }),
        ...(target.sentinelUsername === undefined
          ? {}
          : { sentinelUsername: target.sentinelUsername }),
        ...(target.sentinelPassword === undefined
          ? {}
          : { sentinelPassword: target.sentinelPassword }),
        ...(target.tls ? { tls: {}, enableTLSForSentinelMode: true } : {}),
        // Off: in ioredis 6.0.0 a `+switch-master` that arrives while the client is reconnecting
        // (the old master died) aborts that connect, and an aborted connect ends the client for
        // good (status `end`). A dead master drops the connection anyway and the reconnect asks the
        // sentinels; a demoted live one answers READONLY, which reconnects (below).
        failoverDetector: false,
        reconnectOnError: reconnectOnReadonly,
        ...common,
        ...lazy,
        ...(retry === undefined
          ? {}
          : { retryStrategy: retry, sentinelRetryStrategy: (attempt: number) => retry(attempt) }),
      }),
    );
  }
  const { nodes, redisOptions } = clusterSeed(url);
  return new Cluster(nodes, {
    ...lazy,
    redisOptions: { ...redisOptions, ...common },
    scaleReads: 'master',
    slotsRefreshTimeout: CLUSTER_SLOTS_REFRESH_TIMEOUT_MS,
    ...(retry === undefined ? {} : { clusterRetryStrategy: (attempt: number) => retry(attempt) }),
  });
}

/**
 * Every master behind `client`: the client itself on one server, each master node's connection
 * on a cluster (known once the cluster is connected).
 */
export function masterConnections(client: RedisClient): Redis[] {
  return isCluster(client) ? client.nodes('master') : [client];
}

/**
 * `host:port` of one node connection, for messages: on a sentinel connection the master it is
 * connected to now (`sentinel:<name>` before it has connected).
 */
export function nodeAddress(node: Redis): string {
  const { sentinels } = node.options;
  if (Array.isArray(sentinels) && sentinels.length > 0) {
    const stream = node.stream as { remoteAddress?: string; remotePort?: number } | undefined;
    if (stream?.remoteAddress !== undefined && stream.remotePort !== undefined) {
      return `${stream.remoteAddress}:${stream.remotePort}`;
    }
    return `sentinel:${node.options.name ?? '?'}`;
  }
  const { host, port } = node.options;
  return `${host ?? '?'}:${port ?? '?'}`;
}
