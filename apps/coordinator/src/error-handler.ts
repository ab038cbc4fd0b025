import { FlowfleetError, type ErrorCode } from '@flowfleet/errors';
import { errorEnvelopeOf } from '@flowfleet/protocol';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Fastify's own request errors, mapped onto coded API errors. */
const FASTIFY_CODES: Readonly<Record<string, ErrorCode>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'API_BODY_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'API_UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'API_INVALID_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'API_INVALID_JSON',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'API_BAD_REQUEST',
};

/** Turns any thrown value into a FlowfleetError when it is an expected request failure. */
export function asCodedError(error: unknown): unknown {
  if (error instanceof FlowfleetError) return error;
  if (error instanceof SyntaxError && (error as FastifyError).statusCode === 400) {
    return new FlowfleetError('API_INVALID_JSON', `invalid JSON body: ${error.message}`);
  }
  const fastifyError = error as Partial<FastifyError>;
  const mapped = fastifyError.code === undefined ? undefined : FASTIFY_CODES[fastifyError.code];
  if (mapped !== undefined) {
    return new FlowfleetError(mapped, fastifyError.message ?? mapped, {
      details: {},
      cause: error,
    });
  }
  const status = fastifyError.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    return new FlowfleetError('API_BAD_REQUEST', fastifyError.message ?? 'bad request', {
      details: { status },
      cause: error,
    });
  }
  return error;
}

/**
 * Installs the error envelope `{code, message, details}` for every failure and a coded 404 for
 * unknown routes. Defects are logged with their stack and answered `INTERNAL_ERROR`.
 */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const coded = asCodedError(error);
    const { status, body } = errorEnvelopeOf(coded);
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.info({ code: body.code }, 'request rejected');
    // An upload cut short at its limit leaves bytes unread on the socket: do not reuse it.
    if (body.code === 'API_BLOB_TOO_LARGE') void reply.header('connection', 'close');
    return reply.status(status).send(body);
  });
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const { status, body } = errorEnvelopeOf(
      new FlowfleetError('API_ROUTE_NOT_FOUND', `no route ${request.method} ${request.url}`, {
        details: { method: request.method, url: request.url },
      }),
    );
    return reply.status(status).send(body);
  });
}
