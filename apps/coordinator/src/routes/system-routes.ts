import { FlowfleetError } from '@flowfleet/errors';
import { HealthSchema, OpenApiDocumentSchema } from '@flowfleet/protocol';
import type { FastifyInstance } from 'fastify';
import type { MetricsSnapshot } from '../metrics.js';
import { buildOpenApi } from '../openapi.js';
import type { CoordinatorServices } from '../services.js';
import type { ZodTypeProvider } from '../zod-type-provider.js';
import { readLaneCapacities } from './fleet-routes.js';

const HEALTH_TIMEOUT_MS = 1_000;

async function pingWithin(services: CoordinatorServices, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      services.redis.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no PONG within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (cause) {
    throw new FlowfleetError('COORD_REDIS_UNAVAILABLE', 'Redis does not answer', {
      details: { timeoutMs },
      cause,
    });
  } finally {
    clearTimeout(timer);
  }
}

/** Reads what the fleet gauges show. */
async function metricsSnapshot(services: CoordinatorServices): Promise<MetricsSnapshot> {
  const [{ workers, counts, lanes }, latest] = await Promise.all([
    readLaneCapacities(services),
    services.weights.latestVersions(),
  ]);
  const live = workers.filter((worker) => worker.alive);
  const scaling = await services.scaling.plan(workers, lanes);
  const syncLag = new Map<string, number>();
  if (live.length > 0) {
    for (const [component, version] of latest) {
      const lowest = Math.min(...live.map((worker) => worker.manifest.weights[component] ?? 0));
      syncLag.set(component, Math.max(0, version - lowest));
    }
  }
  return {
    liveWorkers: live.length,
    deadWorkers: workers.length - live.length,
    lanes: counts,
    syncLag,
    latestVersions: latest,
    scaling: scaling.classes,
    embedsCacheBytes: new Map(
      live.map((worker) => [worker.workerId, worker.heartbeat?.embedsCacheBytes ?? 0]),
    ),
  };
}

/** Health, Prometheus metrics and the OpenAPI document. */
export function registerSystemRoutes(
  app: FastifyInstance,
  services: CoordinatorServices,
  version: string,
): void {
  const api = app.withTypeProvider<ZodTypeProvider>();
  api.get('/healthz', {
    schema: { response: { 200: HealthSchema } },
    config: {
      flowfleet: {
        roles: [],
        summary: 'Liveness and Redis reachability (no auth)',
        errors: ['COORD_REDIS_UNAVAILABLE'],
      },
    },
    handler: async () => {
      await pingWithin(services, HEALTH_TIMEOUT_MS);
      return { status: 'ok' as const, redis: 'up' as const };
    },
  });

  api.get('/metrics', {
    config: {
      flowfleet: {
        roles: ['viewer'],
        summary:
          'Prometheus metrics: lane depth, jobs by state, weight sync lag, workers, scaling per device class',
        produces: { status: 200, body: 'text' },
        usesRedis: true,
      },
    },
    handler: async (_request, reply) => {
      services.metrics.apply(await metricsSnapshot(services));
      return reply
        .header('content-type', services.metrics.contentType)
        .send(await services.metrics.render());
    },
  });

  let document: Record<string, unknown> | undefined;
  api.get('/openapi.json', {
    schema: { response: { 200: OpenApiDocumentSchema } },
    config: {
      flowfleet: {
        roles: [],
        summary:
          'This OpenAPI 3.1 document, generated from the registered routes and their schemas',
      },
    },
    handler: async () => {
      // Built on first request: by then every route is registered.
      document ??= buildOpenApi(services.routes, version);
      return document;
    },
  });
}
