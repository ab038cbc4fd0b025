import { FlowfleetError } from '@flowfleet/errors';
import {
  SyncAcceptedSchema,
  WeightReportSchema,
  parseOrThrow,
  weightSyncSchema,
  type WeightSync,
} from '@flowfleet/protocol';
import type { FastifyInstance } from 'fastify';
import { ComponentParamsSchema, SyncBodySchema, WeightReportQuerySchema } from '../api-schemas.js';
import type { CoordinatorServices } from '../services.js';

/** Weight sync (trainer → fleet) and the per-version report (which workers have it). */
export function registerWeightRoutes(app: FastifyInstance, services: CoordinatorServices): void {
  const { blobs, weights, fleet, limits } = services;
  const syncSchema = weightSyncSchema(limits);

  app.post('/v1/weights/:component/sync', {
    config: {
      flowfleet: {
        roles: ['trainer'],
        summary:
          'Make an uploaded blob the next weight version of a component: recorded, appended to the sync stream, published',
        params: ComponentParamsSchema,
        body: SyncBodySchema,
        response: { status: 202, body: SyncAcceptedSchema },
        errors: [
          'API_STALE_VERSION',
          'API_BLOB_NOT_FOUND',
          'API_INVALID_BODY',
          'API_INVALID_PARAMS',
        ],
      },
    },
    handler: async (request, reply) => {
      const { component } = parseOrThrow(
        ComponentParamsSchema,
        request.params,
        'API_INVALID_PARAMS',
        'path',
      );
      const body = parseOrThrow(SyncBodySchema, request.body, 'API_INVALID_BODY', 'sync body');
      const blob = await blobs.statBlob(body.sha256);
      if (blob === undefined) {
        throw new FlowfleetError(
          'API_BLOB_NOT_FOUND',
          `no blob ${body.sha256}: upload it with PUT /v1/blobs before syncing`,
          { details: { sha256: body.sha256 } },
        );
      }
      const sync: WeightSync = parseOrThrow(
        syncSchema,
        { component, version: body.version, sha256: body.sha256, sizeBytes: blob.sizeBytes },
        'API_INVALID_BODY',
        'weight sync',
      );
      const { previous, streamId } = await weights.sync(sync);
      request.log.info({ component, version: sync.version, previous }, 'weight sync broadcast');
      return reply.status(202).send({ ...sync, previous, streamId });
    },
  });

  app.get('/v1/weights/:component', {
    config: {
      flowfleet: {
        roles: ['viewer'],
        summary:
          "A component's current version and its newest versions with each worker's ack (query: limit)",
        params: ComponentParamsSchema,
        response: { status: 200, body: WeightReportSchema },
        errors: ['API_INVALID_PARAMS'],
      },
    },
    handler: async (request) => {
      const { component } = parseOrThrow(
        ComponentParamsSchema,
        request.params,
        'API_INVALID_PARAMS',
        'path',
      );
      const { limit } = parseOrThrow(
        WeightReportQuerySchema,
        request.query ?? {},
        'API_INVALID_PARAMS',
        'query',
      );
      const live = (await fleet.liveWorkers()).map((worker) => worker.workerId);
      return weights.report(component, live, limit);
    },
  });
}
