import { FlowfleetError } from '@flowfleet/errors';
import {
  EnqueuedRolloutSchema,
  JobStatusSchema,
  ResultWriteSchema,
  parseOrThrow,
  rolloutRequestSchema,
} from '@flowfleet/protocol';
import type { FastifyInstance } from 'fastify';
import { JobIdParamsSchema, ResultParamsSchema } from '../api-schemas.js';
import type { CoordinatorServices } from '../services.js';
import { collectBody, rawBodyStream, registerOctetStream } from './raw-body.js';

function jobNotFound(id: string): FlowfleetError {
  return new FlowfleetError('API_JOB_NOT_FOUND', `no rollout job ${id}`, { details: { id } });
}

/** Rollout routes: enqueue, status, result download, and the worker's result upload. */
export function registerRolloutRoutes(app: FastifyInstance, services: CoordinatorServices): void {
  const { rollouts, jobs, blobs, limits } = services;

  app.post('/v1/rollouts', {
    config: {
      flowfleet: {
        roles: ['trainer'],
        summary: 'Enqueue a rollout (a prompt × a group of seeds) on the lane of its requirements',
        body: rolloutRequestSchema(limits),
        response: { status: 202, body: EnqueuedRolloutSchema },
        errors: [
          'PROTO_INVALID_REQUEST',
          'API_NO_CAPACITY',
          'API_WEIGHT_VERSION_UNAVAILABLE',
          'API_BODY_TOO_LARGE',
        ],
      },
    },
    handler: async (request, reply) => {
      const enqueued = await rollouts.enqueue(request.body);
      return reply.status(202).send(enqueued);
    },
  });

  app.get('/v1/rollouts/:id', {
    config: {
      flowfleet: {
        roles: ['viewer'],
        summary: 'A rollout job: queued | active | completed | failed, progress, summary or error',
        params: JobIdParamsSchema,
        response: { status: 200, body: JobStatusSchema },
        errors: ['API_JOB_NOT_FOUND', 'API_INVALID_PARAMS'],
      },
    },
    handler: async (request) => {
      const { id } = parseOrThrow(JobIdParamsSchema, request.params, 'API_INVALID_PARAMS', 'path');
      const lane = await rollouts.laneOf(id);
      if (lane === undefined) throw jobNotFound(id);
      return jobs.status(id, lane);
    },
  });

  app.get('/v1/rollouts/:id/result', {
    config: {
      flowfleet: {
        roles: ['viewer'],
        summary: "A completed rollout's tensors (safetensors bytes)",
        params: JobIdParamsSchema,
        response: { status: 200, body: 'binary' },
        errors: ['API_JOB_NOT_FOUND', 'API_RESULT_NOT_FOUND', 'API_INVALID_PARAMS'],
      },
    },
    handler: async (request, reply) => {
      const { id } = parseOrThrow(JobIdParamsSchema, request.params, 'API_INVALID_PARAMS', 'path');
      const opened = await blobs.openResult(id, 'result.safetensors');
      if (opened === undefined) {
        if ((await rollouts.laneOf(id)) === undefined) throw jobNotFound(id);
        throw new FlowfleetError('API_RESULT_NOT_FOUND', `rollout ${id} has no stored result yet`, {
          details: { id },
        });
      }
      return reply
        .header('content-type', 'application/octet-stream')
        .header('content-length', opened.sizeBytes)
        .send(opened.stream);
    },
  });

  // Uploads take a raw byte stream; the octet-stream parser is scoped to this plugin.
  void app.register(async (uploads) => {
    registerOctetStream(uploads);
    uploads.put('/v1/results/:id/:file', {
      config: {
        flowfleet: {
          roles: ['worker'],
          summary:
            "A worker stores a job's result file once (same bytes again: 200; different bytes: 409)",
          params: ResultParamsSchema,
          body: 'binary',
          response: { status: 201, body: ResultWriteSchema },
          errors: [
            'API_JOB_NOT_FOUND',
            'API_RESULT_CONFLICT',
            'API_BLOB_TOO_LARGE',
            'API_INVALID_BODY',
            'API_INVALID_PARAMS',
          ],
        },
      },
      handler: async (request, reply) => {
        const { id, file } = parseOrThrow(
          ResultParamsSchema,
          request.params,
          'API_INVALID_PARAMS',
          'path',
        );
        if ((await rollouts.laneOf(id)) === undefined) throw jobNotFound(id);
        let write;
        if (file === 'summary.json') {
          // Small and structured: validate before storing (zod at the edge).
          const bytes = await collectBody(request, limits.maxBodyBytes);
          await jobs.validateSummary(id, bytes);
          write = await blobs.putResult(id, file, [bytes], limits.maxBodyBytes);
        } else {
          write = await blobs.putResult(
            id,
            file,
            rawBodyStream(request, limits.maxBlobBytes),
            limits.maxBlobBytes,
          );
        }
        return reply.status(write.status === 'created' ? 201 : 200).send({ id, file, ...write });
      },
    });
  });
}
