import { FlowfleetError } from '@flowfleet/errors';
import { DEFAULT_CARD_REGISTRY, type CardRegistry } from '@flowfleet/models';
import { DEFAULT_LIMITS, EgressBucket, FleetLimits, type Limits } from '@flowfleet/protocol';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { createRedis, quitRedis, type RedisMode, type ReplicationPolicy } from '@flowfleet/redis';
import { pino, type Logger } from 'pino';
import { BearerAuth, edgeServerOptions, refuseMissingHost } from '@flowfleet/protocol/http-edge';
import type { CoordinatorTokens } from './env.js';
import { FsBlobStore, type BlobStore } from './blob-store.js';
import { authorizationOf } from './dashboard/browser-token.js';
import { registerDashboard } from './dashboard/dashboard-routes.js';
import { docQueueBoardRoutes } from './dashboard/queue-board.js';
import { DebugRequestLog, httpLogger } from './dashboard/request-log.js';
import { answerClientError, installErrorHandling, redisUnavailable } from './error-handler.js';
import { assertNoEvictionOnMasters } from './eviction-policy.js';
import { FleetCapacity } from './fleet-capacity.js';
import { prepareFleetDigest } from './fleet-views.js';
import { FleetReader } from './fleet-reader.js';
import { JobEvents } from './job-events.js';
import { JobStatusReader } from './job-status-reader.js';
import { registerStrictJsonParser } from './routes/json-body.js';
import { ResultProvenance } from './result-provenance.js';
import { coordinatorKeys } from './keys.js';
import { LaneQueues } from './lane-queues.js';
import { LaneRegistry } from './lane-registry.js';
import { publishLimits } from './limits-publisher.js';
import { CoordinatorMetrics } from './metrics.js';
import { DEFAULT_RETENTION, type RetentionSettings } from './retention/retention-settings.js';
import { RetentionSweeper } from './retention/retention-sweeper.js';
import { RolloutService } from './rollout-service.js';
import { collectRoutes, type RouteInfo } from './route-table.js';
import type { ScalingClasses } from './scaling-config.js';
import { ScalingPlanner } from './scaling-planner.js';
import { registerBlobRoutes } from './routes/blob-routes.js';
import { registerFleetRoutes } from './routes/fleet-routes.js';
import { registerRolloutRoutes } from './routes/rollout-routes.js';
import { registerSystemRoutes } from './routes/system-routes.js';
import { registerWeightRoutes } from './routes/weight-routes.js';
import type { CoordinatorServices } from './services.js';
import { COORDINATOR_VERSION } from './version.js';
import { WeightRegistry } from './weight-registry.js';
import { zodSerializerCompiler, zodValidatorCompiler } from './zod-type-provider.js';

/** How to build a coordinator. */
export interface CoordinatorOptions {
  readonly redisUrl: string;
  /**
   * `standalone` (default), `cluster` (`redisUrl` then names any seed node) or `sentinel`
   * (`redisUrl` lists the sentinels and names the master group).
   */
  readonly redisMode?: RedisMode;
  /**
   * Replicas that must acknowledge an enqueue (`WAIT`) before it is answered; default none
   * (`FLOWFLEET_REDIS_WAIT_REPLICAS`, ADR 010). Fewer within the timeout: a 503
   * `REDIS_NOT_REPLICATED`.
   */
  readonly redisReplication?: ReplicationPolicy;
  /**
   * Key prefix (default `ff`): control-plane keys are under the hash tag `{prefix}`, each lane's
   * queue under `{prefix:<lane>}`.
   */
  readonly prefix?: string;
  /** Bearer tokens per role, or `null` to turn auth off explicitly (local development). */
  readonly tokens: CoordinatorTokens | null;
  /** The filesystem blob store's directory. */
  readonly blobDir: string;
  /** Default: silent. */
  readonly logger?: Logger;
  /** Edge limits (body, blob, steps, latent, group); default DEFAULT_LIMITS. */
  readonly limits?: Limits;
  /** The workers' heartbeat TTL; a worker dead for 100 × this is forgotten. Default 15 s. */
  readonly heartbeatTtlMs?: number;
  /**
   * A Redis command unanswered this long fails its request with a 503 `API_REDIS_UNAVAILABLE`
   * (a partition drops packets silently: the connection stays "ready" and would hang the request
   * until TCP gives up, minutes later). Default 5 s.
   */
  readonly redisCommandTimeoutMs?: number;
  /** Another blob store (tests, S3 later); default a FsBlobStore in `blobDir`. */
  readonly blobStore?: BlobStore;
  /** The model cards requests are checked against (default: the shipped cards). */
  readonly cards?: CardRegistry;
  /** Autoscaling bounds per device class (`FLOWFLEET_SCALING_CLASSES`); default 0..32 for all. */
  readonly scalingClasses?: ScalingClasses;
  /** What is kept how long (default DEFAULT_RETENTION; README "Retention"). */
  readonly retention?: Partial<RetentionSettings>;
  /** One cap on the bytes all blob downloads send per second (a token bucket); default none. */
  readonly egressBytesPerSecond?: number;
}

/** A built coordinator: the fastify app, its route table, and its lifecycle. */
export interface Coordinator {
  readonly app: FastifyInstance;
  /** Every registered route with the roles that may call it (from fastify's onRoute). */
  readonly routes: readonly RouteInfo[];
  /** The coordinator's collaborators (tests inspect queues and keys through these). */
  readonly services: CoordinatorServices;
  /**
   * Connects Redis, checks its eviction policy, prepares the blob store and listens.
   * Resolves with the base URL.
   * @throws FlowfleetError `COORD_REDIS_UNAVAILABLE`, `COORD_REDIS_EVICTION_POLICY`.
   */
  start(port?: number, host?: string): Promise<string>;
  /** Stops accepting, finishes in-flight requests, closes queues, quits Redis. Idempotent. */
  close(): Promise<void>;
}

const DEFAULT_HEARTBEAT_TTL_MS = 15_000;
const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 5_000;
const DEAD_RETENTION_FACTOR = 100;

/**
 * Builds a coordinator without any I/O: nothing connects or listens until `start()`.
 */
export function createCoordinator(options: CoordinatorOptions): Coordinator {
  const logger = options.logger ?? pino({ level: 'silent' });
  const limits = options.limits ?? DEFAULT_LIMITS;
  const keys = coordinatorKeys(options.prefix ?? 'ff');
  // Fail fast (a few retries) rather than hang an HTTP request while Redis is away.
  const redis = createRedis(options.redisUrl, {
    mode: options.redisMode ?? 'standalone',
    lazyConnect: true,
    maxRetriesPerRequest: 2,
    // Back within half a second of Redis (ioredis's default backs off to 2 s).
    retryStrategy: (attempt) => Math.min(attempt * 50, 500),
    commandTimeout: options.redisCommandTimeoutMs ?? DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
    connectionName: 'flowfleet-coordinator',
  });
  redis.on('error', (error) => logger.warn({ err: error }, 'redis connection error'));
  const retention: RetentionSettings = { ...DEFAULT_RETENTION, ...options.retention };
  const queues = new LaneQueues(redis, keys.laneBullPrefix, logger, retention.eventsMaxLen);
  const blobs = options.blobStore ?? new FsBlobStore(options.blobDir);
  const fleet = new FleetReader({
    redis,
    keys,
    logger,
    deadWorkerRetentionMs:
      DEAD_RETENTION_FACTOR * (options.heartbeatTtlMs ?? DEFAULT_HEARTBEAT_TTL_MS),
    prepare: prepareFleetDigest,
  });
  const lanes = new LaneRegistry(redis, keys, logger);
  const weights = new WeightRegistry(redis, keys);
  const metrics = new CoordinatorMetrics();
  const auth = new BearerAuth(options.tokens ?? undefined);
  const fleetLimits = new FleetLimits({
    read: () => redis.hgetall(keys.limits),
    onUnreadable: (fields) =>
      logger.warn({ fields, key: keys.limits }, 'unreadable published limits: defaults used'),
  });

  const httpLog = httpLogger(logger) as FastifyBaseLogger;
  const app = Fastify({
    // Request URLs are logged: the dashboard's `?token=` is redacted from them.
    loggerInstance: httpLog,
    bodyLimit: limits.maxBodyBytes,
    // The router's and node:http's refusals in the one envelope (the peer server's too).
    ...edgeServerOptions(),
    // Every GET answers HEAD: the same status and headers, no body.
    exposeHeadRoutes: true,
    // Two info lines per request would drown what an operator reads: debug.
    logController: new DebugRequestLog(),
    // A request node:http cannot parse gets the same error envelope as any other.
    clientErrorHandler: (error, socket) => answerClientError(error, socket, httpLog),
  });
  app.setValidatorCompiler(zodValidatorCompiler);
  app.setSerializerCompiler(zodSerializerCompiler);
  // JSON routes take JSON only (a text/plain body would reach zod as a string).
  app.removeContentTypeParser('text/plain');
  // JSON bodies are strict UTF-8: a prompt runs as the bytes the client sent, or is refused.
  registerStrictJsonParser(app);
  // bull-board registers its own routes under /queues: they get their auth doc before collection.
  app.addHook('onRoute', docQueueBoardRoutes);
  const routes = collectRoutes(app);
  const cards = options.cards ?? DEFAULT_CARD_REGISTRY;
  const rollouts = new RolloutService({
    redis,
    keys,
    limits,
    cards,
    blobs,
    queues,
    lanes,
    capacity: new FleetCapacity({ fleet, redis, keys }),
    weights,
    retention,
    logger,
    ...(options.redisReplication === undefined ? {} : { replication: options.redisReplication }),
  });
  const services: CoordinatorServices = {
    egress:
      options.egressBytesPerSecond === undefined
        ? undefined
        : new EgressBucket(options.egressBytesPerSecond),
    redis,
    keys,
    limits,
    fleetLimits,
    cards,
    logger,
    blobs,
    queues,
    lanes,
    fleet,
    weights,
    rollouts,
    jobs: new JobStatusReader(queues, blobs, fleetLimits),
    provenance: new ResultProvenance({ queues, fleetLimits }),
    events: new JobEvents(redis, logger),
    metrics,
    scaling: new ScalingPlanner({
      redis,
      keys,
      logger,
      ...(options.scalingClasses !== undefined ? { classes: options.scalingClasses } : {}),
    }),
    retention: new RetentionSweeper({
      redis,
      keys,
      blobs,
      queues,
      lanes,
      fleet,
      rollouts,
      settings: retention,
      logger,
    }),
    routes,
  };

  installErrorHandling(app, redis);
  refuseMissingHost(app);
  app.addHook('onRequest', async (request) => {
    const doc = request.routeOptions.config.flowfleet;
    if (doc !== undefined) auth.authorize(authorizationOf(request, doc), doc.roles);
    // Fail fast: a command queued on a reconnecting connection waits out ioredis's retries, and
    // a lane queue first opened then waits for the connection indefinitely.
    if (doc?.usesRedis === true && redis.status !== 'ready') throw redisUnavailable();
  });
  app.addHook('onResponse', async (request, reply) => {
    metrics.countRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode);
  });
  registerRolloutRoutes(app, services);
  registerFleetRoutes(app, services);
  registerBlobRoutes(app, services);
  registerWeightRoutes(app, services);
  registerSystemRoutes(app, services, COORDINATOR_VERSION);
  registerDashboard(app, services);

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      // Reverse of start-up; every step runs even when an earlier one fails.
      const steps: [string, () => Promise<unknown>][] = [
        // First: long-polling requests answer at once, so the server's drain is not held up.
        ['job events', () => services.events.close()],
        ['http server', () => closeHttp(app)],
        ['retention sweeper', () => services.retention.close()],
        ['lane queues', () => queues.close()],
        ['blob store', () => blobs.close()],
        ['redis', () => quitRedis(redis)],
      ];
      for (const [name, step] of steps) {
        try {
          await step();
        } catch (error) {
          logger.error({ err: error, step: name }, 'shutdown step failed');
        }
      }
      logger.info('coordinator closed');
    })();
    return closing;
  };

  const start = async (port = 0, host = '127.0.0.1'): Promise<string> => {
    if (closing !== undefined) throw new Error('start() after close(): build a new coordinator');
    try {
      await redis.connect();
    } catch (cause) {
      throw new FlowfleetError(
        'COORD_REDIS_UNAVAILABLE',
        `cannot reach Redis at ${redactUrl(options.redisUrl)}`,
        {
          details: { url: redactUrl(options.redisUrl) },
          cause,
        },
      );
    }
    await assertNoEvictionOnMasters(redis);
    // Before the first request: no job is accepted under limits the fleet has not been told.
    const published = await publishLimits(redis, keys.limits, limits);
    logger.info({ enforced: limits, fleet: published.limits }, 'limits published');
    await blobs.init();
    const url = await app.listen({ port, host });
    services.retention.start();
    logger.info({ url, prefix: keys.prefix, auth: auth.enabled }, 'coordinator listening');
    return url;
  };

  return { app, routes, services, start, close };
}

/** In-flight requests get this long to finish once the server stops accepting. */
const DRAIN_TIMEOUT_MS = 10_000;
const IDLE_SWEEP_MS = 50;

/**
 * Stops accepting and waits for in-flight requests, cutting connections that outlive the bound.
 * A keep-alive connection whose response was still finishing when close began turns idle later;
 * the sweep closes it then instead of waiting for its keep-alive timeout.
 */
async function closeHttp(app: FastifyInstance): Promise<void> {
  const sweep = setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS);
  const timer = setTimeout(() => app.server.closeAllConnections(), DRAIN_TIMEOUT_MS);
  try {
    await app.close();
  } finally {
    clearInterval(sweep);
    clearTimeout(timer);
  }
}

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable url)';
  }
}
