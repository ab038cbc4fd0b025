import { Readable } from 'node:stream';
import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import { RolloutSummarySchema } from '@flowfleet/formats';
import {
  CancelledRolloutSchema,
  EnqueuedRolloutSchema,
  IDEMPOTENCY_KEY_HEADER,
  IdempotencyKeySchema,
  JOB_LOCK_HEADER,
  JobStatusSchema,
  ResultUploadSchema,
  type JobStatus,
  SUMMARY_BYTES_HEADER,
} from '@flowfleet/protocol';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { JobIdParamsSchema, JobStatusQuerySchema } from '../api-schemas.js';
import type { BlobStore } from '../blob-store.js';
import type { CoordinatorServices } from '../services.js';
import type { ZodTypeProvider } from '../zod-type-provider.js';
import { rawBodyStream, registerOctetStream, splitBody } from './raw-body.js';

function isFinished(status: JobStatus): boolean {
  return status.status === 'completed' || status.status === 'failed';
}

/** True when the job is not what the caller last saw. */
function differs(
  status: JobStatus,
  seen: { status?: string | undefined; step?: number | undefined; attempts?: number | undefined },
): boolean {
  return (
    status.status !== seen.status ||
    (seen.step !== undefined && status.progress.step !== seen.step) ||
    (seen.attempts !== undefined && status.attempts !== seen.attempts)
  );
}

function jobNotFound(id: string): FlowfleetError {
  return new FlowfleetError('API_JOB_NOT_FOUND', `no rollout job ${id}`, { details: { id } });
}

/** Rollout routes: enqueue, status, result download, and the worker's result upload. */
export function registerRolloutRoutes(app: FastifyInstance, services: CoordinatorServices): void {
  const { rollouts, jobs, blobs, limits, events, queues, provenance } = services;
  const api = app.withTypeProvider<ZodTypeProvider>();

  api.post('/v1/rollouts', {
    schema: {
      headers: z.looseObject({
        [IDEMPOTENCY_KEY_HEADER]: IdempotencyKeySchema.optional().describe(
          'A UUID naming this enqueue: sent again (a retry), it answers the job already enqueued',
        ),
      }),
      body: rollouts.requestSchema,
      response: { 202: EnqueuedRolloutSchema },
    },
    config: {
      flowfleet: {
        roles: ['trainer'],
        summary: 'Enqueue a rollout (a prompt × a group of seeds) on the lane of its requirements',
        bodyError: 'PROTO_INVALID_REQUEST',
        errors: [
          'MODEL_UNKNOWN_CARD',
          'MODEL_INVALID_REQUEST',
          'API_NO_CAPACITY',
          'API_IDEMPOTENCY_CONFLICT',
          'API_WEIGHT_VERSION_UNAVAILABLE',
          'API_BODY_TOO_LARGE',
          'API_INVALID_JSON',
        ],
        usesRedis: true,
      },
    },
    handler: async (request, reply) => {
      const key = request.headers[IDEMPOTENCY_KEY_HEADER];
      const enqueued = await rollouts.enqueue(request.body, key);
      return reply.status(202).send(enqueued);
    },
  });

  api.get('/v1/rollouts/:id', {
    schema: {
      params: JobIdParamsSchema,
      querystring: JobStatusQuerySchema,
      response: { 200: JobStatusSchema },
    },
    config: {
      flowfleet: {
        roles: ['viewer'],
        summary:
          'A rollout job: queued | active | completed | failed, progress, summary or error (a job whose stored payload cannot be read is failed, PROTO_INVALID_JOB). With waitMs and the status/step/attempts last seen, the answer waits (long-poll) until the job differs, finishes, or waitMs passes',
        errors: ['API_JOB_NOT_FOUND'],
        usesRedis: true,
      },
    },
    handler: async (request, reply) => {
      const { id } = request.params;
      const lane = await rollouts.laneOf(id);
      if (lane === undefined) throw jobNotFound(id);
      const seen = request.query;
      if (seen.waitMs === 0 || seen.status === undefined) return jobs.status(id, lane);
      // Watch before reading, so an event between the read and the wait still wakes it.
      const watch = await events.watch(queues.get(lane).keys.events!, id);
      // The caller hung up (the response closes before it is sent): stop waiting.
      const gone = (): void => watch.cancel();
      reply.raw.once('close', gone);
      // It may have hung up while the watch started.
      if (request.raw.socket.destroyed) gone();
      try {
        const deadline = Date.now() + seen.waitMs;
        for (;;) {
          const status = await jobs.status(id, lane);
          if (isFinished(status) || differs(status, seen)) return status;
          if (!(await watch.changed(deadline - Date.now()))) return status;
        }
      } finally {
        reply.raw.off('close', gone);
        watch.cancel();
      }
    },
  });

  api.delete('/v1/rollouts/:id', {
    schema: { params: JobIdParamsSchema, response: { 200: CancelledRolloutSchema } },
    config: {
      flowfleet: {
        roles: ['trainer'],
        summary:
          'Cancel a queued rollout: it is removed from its lane and never runs (any result an earlier, cut attempt left is deleted). A running job is not abandoned: it finishes and stores its result, and the cancel is refused (409 API_JOB_NOT_CANCELLABLE, as for a finished one). A cancelled id then answers 404',
        errors: ['API_JOB_NOT_FOUND', 'API_JOB_NOT_CANCELLABLE'],
        usesRedis: true,
      },
    },
    handler: async (request) => {
      const cancelled = await rollouts.cancel(request.params.id);
      // A queued job may still have files from an attempt cut between upload and completion.
      await blobs.deleteResult(cancelled.id);
      return cancelled;
    },
  });

  api.get('/v1/rollouts/:id/result', {
    schema: { params: JobIdParamsSchema },
    config: {
      flowfleet: {
        roles: ['viewer'],
        summary: "A completed rollout's tensors (safetensors bytes)",
        produces: { status: 200, body: 'binary' },
        errors: ['API_JOB_NOT_FOUND', 'API_RESULT_NOT_FOUND'],
        usesRedis: true,
      },
    },
    handler: async (request, reply) => {
      const { id } = request.params;
      const opened = await blobs.openResult(id, 'result.safetensors');
      if (opened === undefined) {
        if (!(await rollouts.exists(id))) throw jobNotFound(id);
        throw new FlowfleetError('API_RESULT_NOT_FOUND', `rollout ${id} has no stored result yet`, {
          details: { id },
        });
      }
      void reply
        .header('content-type', 'application/octet-stream')
        .header('content-length', opened.sizeBytes);
      if (request.method !== 'HEAD') return reply.send(opened.stream);
      // The GET's headers, no body: the file is not read (fastify would drain it for HEAD).
      opened.stream.destroy();
      return reply.send(Readable.from([]));
    },
  });

  api.get('/v1/results/:id/summary', {
    schema: { params: JobIdParamsSchema, response: { 200: RolloutSummarySchema } },
    config: {
      flowfleet: {
        roles: ['worker', 'viewer'],
        summary:
          "The summary.json stored with job id's result: the first one stored stands, so a " +
          'retried attempt whose different result was refused (409) completes with this one',
        errors: ['API_JOB_NOT_FOUND', 'API_RESULT_NOT_FOUND'],
        usesRedis: true,
      },
    },
    handler: async (request) => {
      const { id } = request.params;
      const summary = await jobs.summary(id);
      if (summary === undefined) {
        if (!(await rollouts.exists(id))) throw jobNotFound(id);
        throw new FlowfleetError('API_RESULT_NOT_FOUND', `rollout ${id} has no stored summary`, {
          details: { id },
        });
      }
      return summary;
    },
  });

  // Uploads take a raw byte stream and nothing else; the parser is scoped to this plugin.
  void app.register(async (scope) => {
    registerOctetStream(scope);
    const uploads = scope.withTypeProvider<ZodTypeProvider>();
    uploads.put('/v1/results/:id', {
      schema: {
        params: JobIdParamsSchema,
        headers: z.looseObject({
          [SUMMARY_BYTES_HEADER]: z.coerce
            .number()
            .int()
            .min(2)
            .max(limits.maxBodyBytes)
            .describe("How many leading body bytes are the job's summary.json"),
          [JOB_LOCK_HEADER]: z
            .string()
            .min(1)
            .max(256)
            .describe('The lock token the uploading attempt holds the job with'),
        }),
        response: { 200: ResultUploadSchema, 201: ResultUploadSchema },
      },
      config: {
        flowfleet: {
          roles: ['worker'],
          summary:
            "A worker stores a job's summary.json and result.safetensors in one request: the body " +
            `is the summary's bytes then the result's, the ${SUMMARY_BYTES_HEADER} header says ` +
            `where the summary ends. Only the attempt that holds the job may store (the ${JOB_LOCK_HEADER} ` +
            "header is its lock token: else 409 API_RESULT_NOT_HOLDER), and the summary must describe the job's " +
            'request (model, prompts, seeds, steps, sampler, guidance, schedule, weights: else 422 ' +
            'API_RESULT_MISMATCH). The result is written once (same bytes again: 200; ' +
            'different bytes: 409, nothing written); the first summary stored stands.',
          consumes: 'binary',
          errors: [
            'API_JOB_NOT_FOUND',
            'API_RESULT_NOT_HOLDER',
            'API_RESULT_MISMATCH',
            'API_RESULT_CONFLICT',
            'API_BLOB_TOO_LARGE',
            'API_BLOB_STORE_FULL',
            'API_UNSUPPORTED_MEDIA_TYPE',
          ],
          usesRedis: true,
        },
      },
      handler: async (request, reply) => {
        const { id } = request.params;
        const summaryBytes = request.headers[SUMMARY_BYTES_HEADER];
        const lane = await rollouts.laneOf(id);
        if (lane === undefined || !(await rollouts.exists(id))) throw jobNotFound(id);
        const body = rawBodyStream(request, limits.maxBodyBytes + limits.maxBlobBytes);
        // Only the attempt holding the job stores its result (ADR 014).
        const job = await provenance.holder(lane, id, request.headers[JOB_LOCK_HEADER]);
        const { head, rest } = await splitBody(body, summaryBytes);
        // Small and structured: validated before anything is stored (zod at the edge), and it
        // must describe what the job asked for.
        provenance.answers(job, jobs.validateSummary(id, head));
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
