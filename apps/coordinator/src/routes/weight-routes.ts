import { FlowfleetError } from '@flowfleet/errors';
import { SyncAcceptedSchema, WeightReportSchema, type WeightSync } from '@flowfleet/protocol';
import type { FastifyInstance } from 'fastify';
import { ComponentParamsSchema, SyncBodySchema, WeightReportQuerySchema } from '../api-schemas.js';
import type { CoordinatorServices } from '../services.js';
import type { ZodTypeProvider } from '../zod-type-provider.js';

/** Weight sync (trainer → fleet) and the per-version report (which workers have it). */
export function registerWeightRoutes(app: FastifyInstance, services: CoordinatorServices): void {
  const { blobs, weights, fleet } = services;
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.post('/v1/weights/:component/sync', {
    schema: {
      params: ComponentParamsSchema,
      body: SyncBodySchema,
      response: { 202: SyncAcceptedSchema },
    },
    config: {
      flowfleet: {
        roles: ['trainer'],
        summary:
          'Make an uploaded blob the next weight version of a component: recorded, appended to the sync stream, published',
        errors: ['API_STALE_VERSION', 'API_BLOB_NOT_FOUND', 'API_INVALID_JSON'],
        usesRedis: true,
      },
    },
    handler: async (request, reply) => {
      const { component } = request.params;
      const { version, sha256 } = request.body;
      const blob = await blobs.statBlob(sha256);
      if (blob === undefined) {
        throw new FlowfleetError(
          'API_BLOB_NOT_FOUND',
          `no blob ${sha256}: upload it with PUT /v1/blobs before syncing`,
          { details: { sha256 } },
        );
      }
      // Every part is validated (path, body) or the store's own (the blob's size).
      const sync: WeightSync = { component, version, sha256, sizeBytes: blob.sizeBytes };
      const { previous, streamId } = await weights.sync(sync);
      request.log.info({ component, version, previous }, 'weight sync broadcast');
      return reply.status(202).send({ ...sync, previous, streamId });
    },
  });

  api.get('/v1/weights/:component', {
    schema: {
      params: ComponentParamsSchema,
      querystring: WeightReportQuerySchema,
      response: { 200: WeightReportSchema },
    },
    config: {
      flowfleet: {
        roles: ['viewer'],
        summary:
          "A component's current version and its newest versions with each worker's ack (query: limit)",
        usesRedis: true,
      },
    },
    handler: async (request) => {
      const { component } = request.params;
      const { limit } = request.query;
      const live = (await fleet.liveWorkers()).map((worker) => worker.workerId);
      return weights.report(component, live, limit);
    },
  });
}
