import { FlowfleetError } from '@flowfleet/errors';
import { StoredBlobSchema } from '@flowfleet/protocol';
import type { FastifyInstance } from 'fastify';
import { BlobParamsSchema } from '../api-schemas.js';
import type { CoordinatorServices } from '../services.js';
import type { ZodTypeProvider } from '../zod-type-provider.js';
import { rawBodyStream, registerOctetStream } from './raw-body.js';

/** The content-addressed blob store over HTTP (workers on other hosts need no shared disk). */
export function registerBlobRoutes(app: FastifyInstance, services: CoordinatorServices): void {
  const { blobs, limits } = services;

  void app.register(async (scope) => {
    registerOctetStream(scope);
    scope.withTypeProvider<ZodTypeProvider>().put('/v1/blobs', {
      schema: { response: { 201: StoredBlobSchema } },
      config: {
        flowfleet: {
          roles: ['trainer'],
          summary: 'Upload a blob (raw bytes); answers its sha256 content address',
          consumes: 'binary',
          errors: ['API_BLOB_TOO_LARGE', 'API_UNSUPPORTED_MEDIA_TYPE'],
        },
      },
      handler: async (request, reply) => {
        const stored = await blobs.putBlob(
          rawBodyStream(request, limits.maxBlobBytes),
          limits.maxBlobBytes,
        );
        request.log.info({ sha256: stored.sha256, sizeBytes: stored.sizeBytes }, 'stored a blob');
        return reply.status(201).send(stored);
      },
    });
  });

  app.withTypeProvider<ZodTypeProvider>().get('/v1/blobs/:sha256', {
    schema: { params: BlobParamsSchema },
    config: {
      flowfleet: {
        roles: ['worker', 'trainer'],
        summary: 'Download a blob by its sha256',
        produces: { status: 200, body: 'binary' },
        errors: ['API_BLOB_NOT_FOUND'],
      },
    },
    handler: async (request, reply) => {
      const { sha256 } = request.params;
      const opened = await blobs.openBlob(sha256);
      if (opened === undefined) {
        throw new FlowfleetError('API_BLOB_NOT_FOUND', `no blob ${sha256}`, {
          details: { sha256 },
        });
      }
      return reply
        .header('content-type', 'application/octet-stream')
        .header('content-length', opened.sizeBytes)
        .send(opened.stream);
    },
  });
}
