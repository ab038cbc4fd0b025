import type { ServerOptions } from 'node:http';
import { FlowfleetError } from '@flowfleet/errors';
import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifyServerOptions,
} from 'fastify';
import { errorEnvelopeOf } from '../error-envelope.js';

/** The part of a fastify (HTTP/1.1) server's options {@link edgeServerOptions} sets. */
export interface EdgeServerOptions {
  readonly routerOptions: { readonly maxParamLength: number };
  readonly frameworkErrors: NonNullable<FastifyServerOptions['frameworkErrors']>;
  readonly http: ServerOptions;
}

/**
 * The longest path parameter the edges route. Every id the API issues or accepts is shorter (job
 * and worker ids ≤ 128, a sha256 64, a component 64), so any id the coordinator hands out can be
 * read back; a longer one is answered 414 `API_URL_TOO_LONG` before any handler runs (fastify's
 * default of 100 answered an uncoded 414 for ids the schemas allow).
 */
export const MAX_PATH_PARAM_LENGTH = 256;

/** What the router itself refuses, as a coded error. */
function routerErrorOf(error: FastifyError, url: string): FlowfleetError {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return new FlowfleetError(
      'API_URL_TOO_LONG',
      `a path parameter is longer than ${MAX_PATH_PARAM_LENGTH} characters`,
      { details: { maxParamLength: MAX_PATH_PARAM_LENGTH, urlLength: url.length } },
    );
  }
  return new FlowfleetError('API_BAD_REQUEST', `the request path is not valid: ${error.message}`, {
    details: { reason: error.code === 'FST_ERR_BAD_URL' ? 'BAD_URL' : error.code },
    cause: error,
  });
}

/**
 * Answers the router's own refusals (a malformed percent-encoding, an over-long parameter) in the
 * one envelope `{code, message, details}`: fastify answers these before any route, hook or error
 * handler runs.
 */
function answerRouterError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const { status, body } = errorEnvelopeOf(routerErrorOf(error, request.url));
  request.log.debug({ code: body.code }, 'request rejected by the router');
  void reply.status(status).send(body);
}

/**
 * The fastify options every flowfleet HTTP edge (the coordinator, a worker's peer server) is
 * built with, so that both speak one error format for what the router and node:http refuse:
 * the parameter bound above, `frameworkErrors` answered in the envelope, and node:http's own
 * Host check turned off so that {@link refuseMissingHost} answers it coded (node:http answered
 * an empty 400).
 */
export function edgeServerOptions(): EdgeServerOptions {
  return {
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    frameworkErrors: answerRouterError,
    http: { requireHostHeader: false },
  };
}

/**
 * Refuses an HTTP/1.1 request without a Host header (RFC 9112 §3.2) with 400 `API_BAD_REQUEST`
 * (`details.reason: 'MISSING_HOST'`), before authentication and routing, as node:http would have
 * but in the envelope. Install it first among the `onRequest` hooks.
 */
export function refuseMissingHost(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (request.raw.httpVersion === '1.1' && request.raw.headers.host === undefined) {
      throw new FlowfleetError('API_BAD_REQUEST', 'an HTTP/1.1 request needs a Host header', {
        details: { reason: 'MISSING_HOST' },
      });
    }
  });
}
