import { RolloutListSchema } from '@flowfleet/protocol';
import type { FastifyInstance } from 'fastify';
import type { CoordinatorServices } from '../services.js';
import type { ZodTypeProvider } from '../zod-type-provider.js';
import { listRecentRollouts, RolloutListQuerySchema } from './rollout-list.js';

/** `GET /v1/rollouts?limit=N`: recent rollouts across lanes, newest first (viewer). */
export function registerRolloutListRoute(
  app: FastifyInstance,
  services: CoordinatorServices,
): void {
  app.withTypeProvider<ZodTypeProvider>().get('/v1/rollouts', {
    schema: { querystring: RolloutListQuerySchema, response: { 200: RolloutListSchema } },
    config: {
      flowfleet: {
        roles: ['viewer'],
        summary:
          'The most recent rollouts across every lane, newest first: status and step progress (query: limit, 1–100, default 20)',
        usesRedis: true,
      },
    },
    handler: async (request) => ({
      rollouts: await listRecentRollouts(services, request.query.limit),
    }),
  });
}
