import { FlowfleetError } from '@flowfleet/errors';
import { Readable } from 'node:stream';
import { StoredBlobSchema, throttled } from '@flowfleet/protocol';
import type { FastifyInstance } from 'fastify';
import { BlobParamsSchema } from '../api-schemas.js';
import type { ByteRange } from '../blob-store.js';
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

  app.withTypeProvider<ZodTypeProvider>().get('/v1/blobs/:sha256', {
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
    handler: async (request, reply) => {
      const { sha256 } = request.params;
      const header = request.headers.range;
      const range = header === undefined ? undefined : parseRange(header);
      const opened = await blobs.openBlob(sha256, range);
      if (opened === undefined) {
        throw new FlowfleetError('API_BLOB_NOT_FOUND', `no blob ${sha256}`, {
          details: { sha256 },
        });
      }
      reply
        .header('content-type', 'application/octet-stream')
        .header('accept-ranges', 'bytes')
        .header('content-length', opened.sizeBytes);
      if (range !== undefined) {
        reply
          .status(206)
          .header('content-range', `bytes ${range.start}-${range.end}/${opened.totalBytes}`);
      }
      // Under an egress cap every download pays into the one bucket (a link's bandwidth).
      return reply.send(
        egress === undefined ? opened.stream : Readable.from(throttled(opened.stream, egress)),
      );
    },
  });
}

/**
 * The one `bytes=first-last` range of a Range header (both positions given, inclusive);
 * multi-range, open-ended and suffix forms are refused.
 * @throws FlowfleetError API_RANGE_NOT_SATISFIABLE
 */
export function parseRange(header: string): ByteRange {
  const match = /^bytes=(\d{1,15})-(\d{1,15})$/.exec(header.trim());
  if (match === null) {
    throw new FlowfleetError(
      'API_RANGE_NOT_SATISFIABLE',
      `Range ${JSON.stringify(header)} is not one bytes=first-last range`,
      { details: { range: header } },
    );
  }
  return { start: Number(match[1]), end: Number(match[2]) };
}
