import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import {
  EnqueuedRolloutSchema,
  IDEMPOTENCY_KEY_HEADER,
  IdempotencyKeySchema,
  JobStatusSchema,
  ResultUploadSchema,
  SUMMARY_BYTES_HEADER,
  parseOrThrow,
  rolloutRequestSchema,
  type Limits,
} from '@flowfleet/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { JobIdParamsSchema } from '../api-schemas.js';
import { SMALL_RESULT_BYTES, type BlobStore, type ByteSource } from '../blob-store.js';
import type { CoordinatorServices } from '../services.js';
import { collectBody, rawBodyStream, registerOctetStream, splitBody } from './raw-body.js';

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
        headers: [
          {
            name: IDEMPOTENCY_KEY_HEADER,
            required: false,
            description:
              'A UUID naming this enqueue: sent again (a retry), it answers the job already enqueued',
            schema: IdempotencyKeySchema,
          },
        ],
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
      const key = parseOrThrow(
        IdempotencyKeySchema.optional(),
        request.headers[IDEMPOTENCY_KEY_HEADER],
        'PROTO_INVALID_REQUEST',
        `the ${IDEMPOTENCY_KEY_HEADER} header`,
      );
      const enqueued = await rollouts.enqueue(request.body, key);
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
        if (!(await rollouts.exists(id))) throw jobNotFound(id);
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
    uploads.put('/v1/results/:id', {
      config: {
        flowfleet: {
          roles: ['worker'],
          summary:
            "A worker stores a job's summary.json and result.safetensors in one request: the body " +
            `is the summary's bytes then the result's, the ${SUMMARY_BYTES_HEADER} header says ` +
            'where the summary ends. The result is written once (same bytes again: 200; ' +
            'different bytes: 409, nothing written); the first summary stored stands.',
          params: JobIdParamsSchema,
          headers: [
            {
              name: SUMMARY_BYTES_HEADER,
              required: true,
              description: "How many leading body bytes are the job's summary.json",
              schema: z.int().min(2),
            },
          ],
          body: 'binary',
          response: { status: 201, body: ResultUploadSchema },
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
        const { id } = parseOrThrow(
          JobIdParamsSchema,
          request.params,
          'API_INVALID_PARAMS',
          'path',
        );
        const summaryBytes = summaryLength(request.headers[SUMMARY_BYTES_HEADER], limits);
        if (!(await rollouts.exists(id))) throw jobNotFound(id);
        const { head, rest } = await readResultUpload(request, summaryBytes, limits);
        // Small and structured: validated before anything is stored (zod at the edge).
        jobs.validateSummary(id, head);
        const result = await blobs.putResult(id, 'result.safetensors', rest, limits.maxBlobBytes);
        const summary = await storeSummaryOnce(blobs, id, head, limits.maxBodyBytes);
        return reply.status(result.status === 'created' ? 201 : 200).send({
          id,
          sha256: result.sha256,
          sizeBytes: result.sizeBytes,
          status: result.status,
          summary,
        });
      },
    });
  });
}

/**
 * The summary's length from its header: an integer from 2 (`{}`) to the body limit.
 * @throws FlowfleetError `API_INVALID_BODY`
 */
function summaryLength(header: string | string[] | undefined, limits: Limits): number {
  const value = Number(typeof header === 'string' ? header : NaN);
  if (!Number.isSafeInteger(value) || value < 2 || value > limits.maxBodyBytes) {
    throw new FlowfleetError(
      'API_INVALID_BODY',
      `the ${SUMMARY_BYTES_HEADER} header must give the summary's length in bytes (2..${limits.maxBodyBytes})`,
      {
        details: {
          issues: [{ path: ['headers', SUMMARY_BYTES_HEADER], message: `got ${String(header)}` }],
        },
      },
    );
  }
  return value;
}

/**
 * The summary part of a result upload in memory, and the result part: in memory too when small
 * (the store then writes it in one writer-thread message), else as the rest of the request stream.
 * @throws FlowfleetError `API_INVALID_BODY` (body shorter than the summary), `API_BLOB_TOO_LARGE`
 */
async function readResultUpload(
  request: FastifyRequest,
  summaryBytes: number,
  limits: Limits,
): Promise<{ head: Buffer; rest: ByteSource }> {
  const maxBytes = limits.maxBodyBytes + limits.maxBlobBytes;
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared <= summaryBytes + SMALL_RESULT_BYTES) {
    const body = await collectBody(request, Math.min(maxBytes, summaryBytes + SMALL_RESULT_BYTES));
    const { head, rest } = await splitBody([body], summaryBytes);
    const parts: Uint8Array[] = [];
    for await (const part of rest) parts.push(part);
    return { head, rest: parts };
  }
  return splitBody(rawBodyStream(request, maxBytes), summaryBytes);
}

/** Stores summary.json unless an earlier attempt did (that one stands: it names who ran first). */
async function storeSummaryOnce(
  blobs: BlobStore,
  id: string,
  bytes: Buffer,
  maxBytes: number,
): Promise<'created' | 'kept'> {
  try {
    const written = await blobs.putResult(id, 'summary.json', [bytes], maxBytes);
    return written.status === 'created' ? 'created' : 'kept';
  } catch (error) {
    if (isFlowfleetError(error, 'API_RESULT_CONFLICT')) return 'kept';
    throw error;
  }
}
