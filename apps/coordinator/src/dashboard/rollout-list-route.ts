import { parseOrThrow } from '@flowfleet/protocol';
import type { FastifyInstance } from 'fastify';
import type { CoordinatorServices } from '../services.js';
import { listRecentRollouts, RolloutListQuerySchema, RolloutListSchema } from './rollout-list.js';

/** `GET /v1/rollouts?limit=N`: recent rollouts across lanes, newest first (viewer). */
export function registerRolloutListRoute(
  app: FastifyInstance,
  services: CoordinatorServices,
): void {
  app.get('/v1/rollouts', {
    config: {
      flowfleet: {
        roles: ['viewer'],
        summary:
          'The most recent rollouts across every lane, newest first: status and step progress (query: limit, 1–100, default 20)',
        response: { status: 200, body: RolloutListSchema },
        errors: ['API_INVALID_PARAMS'],
      },
    },
    handler: async (request) => {
      const { limit } = parseOrThrow(
        RolloutListQuerySchema,
        request.query ?? {},
        'API_INVALID_PARAMS',
        'query',
      );
      return { rollouts: await listRecentRollouts(services, limit) };
    },
  });
}
