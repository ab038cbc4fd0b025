import { FlowfleetError } from '@flowfleet/errors';
import type { FastifyInstance } from 'fastify';
import { errorEnvelopeOf } from '../error-envelope.js';

/** A thrown value as a coded error when it is a client's fault (fastify's own 4xx errors). */
function codedOf(error: unknown): unknown {
  if (error instanceof FlowfleetError) return error;
  const status = (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new FlowfleetError('API_BAD_REQUEST', (error as Error).message || 'bad request', {
      details: { status },
      cause: error,
    });
  }
  return error;
}

/**
 * Answers every failure of a small HTTP server (a worker's peer server) in the envelope
 * `{code, message, details}` with the code's status, and unknown routes with a coded 404 — the
 * envelope the coordinator answers with (its own handler adds validation, Redis and store
 * codes). Defects are logged with their stack and answered `INTERNAL_ERROR`.
 */
export function installErrorEnvelope(app: FastifyInstance): void {
  app.setErrorHandler((error: unknown, request, reply) => {
    const { status, body } = errorEnvelopeOf(codedOf(error));
    if (status >= 500) request.log.error({ err: error, code: body.code }, 'request failed');
    else request.log.debug({ code: body.code }, 'request rejected');
    return reply.status(status).send(body);
  });
  app.setNotFoundHandler((request, reply) => {
    const { status, body } = errorEnvelopeOf(
      new FlowfleetError('API_ROUTE_NOT_FOUND', `no route ${request.method} ${request.url}`, {
        details: { method: request.method, url: request.url.slice(0, 200) },
      }),
    );
    return reply.status(status).send(body);
  });
}
