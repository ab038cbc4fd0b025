import type { Socket } from 'node:net';
import { FlowfleetError, type ErrorCode } from '@flowfleet/errors';
import { errorEnvelopeOf, validationError } from '@flowfleet/protocol';
import type {
  FastifyBaseLogger,
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
} from 'fastify';
import type { RouteDoc } from './route-table.js';
import { STORE_FULL_RETRY_AFTER_SECONDS } from './store-files.js';
import { RequestValidationError, type RequestPart } from './zod-type-provider.js';

/** Fastify's own request errors, mapped onto coded API errors. */
const FASTIFY_CODES: Readonly<Record<string, ErrorCode>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'API_BODY_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'API_UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'API_INVALID_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'API_INVALID_JSON',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'API_BAD_REQUEST',
};

/** How a failed request part is named in messages. */
const PART_NAMES: Readonly<Record<RequestPart, string>> = {
  params: 'path',
  querystring: 'query',
  headers: 'headers',
  body: 'body',
};

/** Seconds a client is told to wait before retrying while Redis is away. */
const REDIS_RETRY_AFTER_SECONDS = 1;

/** What the error handler needs to know about the Redis connection. */
export interface RedisState {
  /** ioredis's connection status (`ready` when commands can run). */
  readonly status: string;
}

function validationCode(part: RequestPart, doc: RouteDoc | undefined): ErrorCode {
  if (part === 'params' || part === 'querystring') return 'API_INVALID_PARAMS';
  if (part === 'body' || part === 'headers') return doc?.bodyError ?? 'API_INVALID_BODY';
  return 'API_INVALID_BODY';
}

/**
 * True when a failure is Redis being away rather than a defect: ioredis gave up on the command
 * (`MaxRetriesPerRequestError`), the connection closed under it, or the connection is not ready
 * while something uncoded failed.
 */
export function isRedisUnavailable(error: unknown, redis: RedisState): boolean {
  if (error instanceof FlowfleetError) return false;
  if (error instanceof Error) {
    if (error.name === 'MaxRetriesPerRequestError') return true;
    if (error.message === 'Connection is closed.') return true;
    // ioredis's commandTimeout: the connection looks ready but Redis does not answer (a partition).
    if (error.message === 'Command timed out') return true;
  }
  return redis.status !== 'ready';
}

/** The error of a Redis-backed request while Redis is away. */
export function redisUnavailable(cause?: unknown): FlowfleetError {
  return new FlowfleetError('API_REDIS_UNAVAILABLE', 'Redis is unavailable; retry shortly', {
    details: { retryAfterSeconds: REDIS_RETRY_AFTER_SECONDS },
    ...(cause === undefined ? {} : { cause }),
  });
}

/** Turns any thrown value into a FlowfleetError when it is an expected request failure. */
export function asCodedError(
  error: unknown,
  doc?: RouteDoc,
  redis: RedisState = { status: 'ready' },
): unknown {
  if (error instanceof FlowfleetError) return error;
  if (error instanceof RequestValidationError) {
    return validationError(error.zodError, validationCode(error.part, doc), PART_NAMES[error.part]);
  }
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
  if (isRedisUnavailable(error, redis)) return redisUnavailable(error);
  return error;
}

/**
 * Installs the error envelope `{code, message, details}` for every failure and a coded 404 for
 * unknown routes. Defects are logged with their stack and answered `INTERNAL_ERROR` (or their own
 * 5xx code); Redis being away is a 503 `API_REDIS_UNAVAILABLE` with `Retry-After`, a full blob store a 507
 * `API_BLOB_STORE_FULL` with one.
 */
export function installErrorHandling(app: FastifyInstance, redis: RedisState): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const coded = asCodedError(error, request.routeOptions.config.flowfleet, redis);
    const { status, body } = errorEnvelopeOf(coded);
    if (body.code === 'API_REDIS_UNAVAILABLE' || body.code === 'REDIS_NOT_REPLICATED') {
      request.log.warn(
        { err: error, redis: redis.status, code: body.code },
        'request failed: Redis unavailable or not replicated',
      );
      void reply.header('retry-after', String(REDIS_RETRY_AFTER_SECONDS));
    } else if (status >= 500) request.log.error({ err: error, code: body.code }, 'request failed');
    else if (body.code === 'API_RESULT_CONFLICT') {
      // Two attempts of one job disagree (e.g. a stale worker's late upload after a weight sync).
      request.log.warn(
        { code: body.code, details: body.details },
        'a different result was refused',
      );
    } else if (body.code === 'API_RESULT_NOT_HOLDER' || body.code === 'API_RESULT_MISMATCH') {
      // A late upload of a worker that lost the job, or someone with a worker token forging one.
      request.log.warn(
        { code: body.code, details: body.details },
        'a result upload was refused: not from the holding attempt, or not the job',
      );
    } else request.log.info({ code: body.code }, 'request rejected');
    if (body.code === 'API_BLOB_STORE_FULL') {
      void reply.header('retry-after', String(STORE_FULL_RETRY_AFTER_SECONDS));
    }
    // An upload cut short (at its limit, or by a full disk) leaves bytes unread on the socket: do
    // not reuse it.
    if (body.code === 'API_BLOB_TOO_LARGE' || body.code === 'API_BLOB_STORE_FULL') {
      void reply.header('connection', 'close');
    }
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

/** node:http's parser errors (HPE_*) that a client can fix, with what to say. */
const PARSE_ERRORS: Readonly<Record<string, string>> = {
  HPE_INVALID_CONTENT_LENGTH: 'the Content-Length header is not a valid length',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'Content-Length and Transfer-Encoding are both set',
  HPE_INVALID_TRANSFER_ENCODING: 'the Transfer-Encoding header is not valid',
  HPE_INVALID_CHUNK_SIZE: 'a chunk size of the chunked body is not valid',
  HPE_HEADER_OVERFLOW: 'the request headers are too large',
  HPE_INVALID_HEADER_TOKEN: 'a header name or value holds characters HTTP does not allow',
  HPE_INVALID_METHOD: 'the request method is not valid',
  HPE_INVALID_URL: 'the request target is not valid',
  HPE_INVALID_VERSION: 'the HTTP version is not valid',
  ERR_HTTP_REQUEST_TIMEOUT: 'the request was not received in time',
};

/**
 * Answers a request that node:http could not parse (fastify's `clientErrorHandler`, which runs
 * before any route) with the same `{code, message, details}` envelope as every other error, and
 * closes the connection: after a parse error the stream position is unknown.
 */
export function answerClientError(
  error: Error & { code?: string },
  socket: Socket,
  logger: Pick<FastifyBaseLogger, 'debug'>,
): void {
  // A reset or already-closed socket has nobody to answer.
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const reason = error.code ?? 'unknown';
  logger.debug({ reason }, 'unparseable request answered 400');
  const body = JSON.stringify({
    code: 'API_BAD_REQUEST',
    message: `malformed HTTP request: ${PARSE_ERRORS[reason] ?? 'the request could not be parsed'}`,
    details: { reason },
  });
  socket.end(
    'HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
