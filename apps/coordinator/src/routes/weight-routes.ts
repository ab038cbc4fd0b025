import { SyncAcceptedSchema, WeightReportSchema } from '@flowfleet/protocol';
import type { FastifyInstance } from 'fastify';
import { ComponentParamsSchema, SyncBodySchema, WeightReportQuerySchema } from '../api-schemas.js';
import type { CoordinatorServices } from '../services.js';
import { planFanout } from '../fanout-planner.js';
import { buildWeightVersion } from '../weight-version-builder.js';
import type { ZodTypeProvider } from '../zod-type-provider.js';

/** Weight sync (trainer → fleet) and the per-version report (which workers have it). */
export function registerWeightRoutes(app: FastifyInstance, services: CoordinatorServices): void {
  const { blobs, weights, fleet, cards } = services;
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
          'Make uploaded blobs the next weight version of a component (one safetensors file, the shards of a sharded checkpoint, or a LoRA adapter on a base version): recorded with its manifest and fan-out plan (a chain over the live workers that serve peers) in the component weights hash, published; workers reconcile to it',
        errors: [
          'API_STALE_VERSION',
          'API_BLOB_NOT_FOUND',
          'API_SYNC_BASE_UNKNOWN',
          'API_BLOB_CORRUPT',
          'FMT_SAFETENSORS_INVALID',
          'FMT_CHECKPOINT_INVALID',
          'MODEL_LORA_UNBOUND',
          'MODEL_LORA_INVALID',
          'API_INVALID_JSON',
        ],
        usesRedis: true,
      },
    },
    handler: async (request, reply) => {
      const { component } = request.params;
      // Every part is validated (path, body) or the store's own (sizes, digests).
      const built = await buildWeightVersion(blobs, cards, component, request.body);
      const { sync } = built;
      const plan = planFanout(await fleet.liveWorkers(), component, sync.version, sync.sizeBytes);
      const { previous } = await weights.sync(built, plan);
      request.log.info(
        {
          component,
          version: sync.version,
          previous,
          kind: built.record.kind ?? 'full',
          fanout: plan.chain.length,
        },
        'weight sync broadcast',
      );
      return reply.status(202).send({
        component,
        version: sync.version,
        sha256: sync.sha256,
        sizeBytes: sync.sizeBytes,
        previous,
      });
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
          "A component's current version (the newest a live worker holds), its latest synced version with its status, and its newest versions with who holds each and each worker's ack, code and reason (query: limit)",
        usesRedis: true,
      },
    },
    handler: async (request) => {
      const { component } = request.params;
      const { limit } = request.query;
      const live = (await fleet.liveWorkers()).map(({ workerId, manifest }) => ({
        workerId,
        weights: manifest.weights,
      }));
      return weights.report(component, live, limit);
    },
  });
}
