import { FlowfleetError } from '@flowfleet/errors';
import { StoredBlobSchema } from '@flowfleet/protocol';
import { registerBlobRangeRoute } from '@flowfleet/protocol/http-edge';
import type { FastifyInstance } from 'fastify';
import { BlobParamsSchema } from '../api-schemas.js';
import type { CoordinatorServices } from '../services.js';
import type { ZodTypeProvider } from '../zod-type-provider.js';
import { rawBodyStream, registerOctetStream } from './raw-body.js';

/** The content-addressed blob store over HTTP (workers on other hosts need no shared disk). */
export function registerBlobRoutes(app: FastifyInstance, services: CoordinatorServices): void {
  const { blobs, limits, egress } = services;

  void app.register(async (scope) => {
    registerOctetStream(scope);
    scope.withTypeProvider<ZodTypeProvider>().put('/v1/blobs', {
      schema: { response: { 201: StoredBlobSchema } },
      config: {
        flowfleet: {
          roles: ['trainer'],
          summary: 'Upload a blob (raw bytes); answers its sha256 content address',
          consumes: 'binary',
          errors: ['API_BLOB_TOO_LARGE', 'API_BLOB_STORE_FULL', 'API_UNSUPPORTED_MEDIA_TYPE'],
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

  // The one blob route (protocol's http-edge; every worker's peer server serves it too).
  registerBlobRangeRoute(app, {
    wholeBlobs: true,
    egress,
    open: async (sha256, range) => {
      const opened = await blobs.openBlob(sha256, range);
      if (opened === undefined) return undefined;
      const { sizeBytes, totalBytes, stream } = opened;
      return { sizeBytes, totalBytes, body: stream };
    },
    notFound: (sha256) =>
      new FlowfleetError('API_BLOB_NOT_FOUND', `no blob ${sha256}`, { details: { sha256 } }),
    route: {
      schema: { params: BlobParamsSchema },
      config: {
        flowfleet: {
          roles: ['worker', 'trainer'],
          summary:
            'Download a blob by its sha256; `Range: bytes=first-last` (one range, inside the blob) answers 206 with those bytes',
          produces: { status: 200, body: 'binary' },
          errors: ['API_BLOB_NOT_FOUND', 'API_RANGE_NOT_SATISFIABLE'],
        },
      },
    },
  });
}
