import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

const TOKEN_PARAM = /([?&]token=)[^&#]*/gi;

/** `url` with the value of every `token` query parameter replaced by `[redacted]`. */
export function redactTokenInUrl(url: string): string {
  return url.replace(TOKEN_PARAM, '$1[redacted]');
}

/** The request fields fastify logs (its own `req` serializer's shape). */
interface LoggedRequest {
  readonly method?: string;
  readonly url?: string;
  readonly host?: string;
  readonly ip?: string;
  readonly headers?: Record<string, unknown>;
  readonly socket?: { readonly remotePort?: number };
}

/**
 * Fastify's `req` log serializer with the query token redacted: pino's `redact` works on paths,
 * not on parts of a string, and the dashboard accepts `?token=` in the URL fastify logs.
 */
export function serializeRequest(request: LoggedRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: request.url === undefined ? undefined : redactTokenInUrl(request.url),
    version: request.headers?.['accept-version'],
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

/** The logger the HTTP server logs requests with: `logger` with the redacting `req` serializer. */
export function httpLogger(logger: Logger): Logger {
  return logger.child({}, { serializers: { req: serializeRequest } });
}

/**
 * Fastify's request log lines at `debug` instead of `info`: two lines per request drown what an
 * operator reads (a fleet polls the coordinator many times a second); failures keep their level.
 */
export class DebugRequestLog extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error !== null && error !== undefined) {
      super.requestCompleted(error, request, reply);
      return;
    }
    if (this.isLogDisabled(request)) return;
    reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}
