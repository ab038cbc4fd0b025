import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** One HTTP request, sent whole (the body is in memory) and answered whole. */
export interface HttpExchangeRequest {
  readonly url: string;
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent in order; Content-Length is set from their total. */
  readonly body?: string | Uint8Array | readonly Uint8Array[];
  readonly signal?: AbortSignal;
  /** Bound on the whole exchange: connect, send, and the last byte of the answer. */
  readonly timeoutMs?: number;
  /** Refuse an answer whose body passes this size (by Content-Length up front, or as it arrives). */
  readonly maxResponseBytes?: number;
}

/** An answer of any status (callers decide what a 4xx or 5xx means). */
export interface HttpExchangeResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** Why an exchange produced no answer. */
export type HttpExchangeFailure = 'network' | 'timeout' | 'aborted' | 'too-large';

/** An exchange that produced no answer; `cause` is the underlying error or abort reason. */
export class HttpExchangeError extends Error {
  readonly kind: HttpExchangeFailure;

  constructor(kind: HttpExchangeFailure, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'HttpExchangeError';
    this.kind = kind;
  }
}

function bodyChunks(body: HttpExchangeRequest['body']): readonly (string | Uint8Array)[] {
  if (body === undefined) return [];
  if (typeof body === 'string' || body instanceof Uint8Array) return [body];
  return body;
}

function sizeOf(chunks: readonly (string | Uint8Array)[]): number {
  let size = 0;
  for (const chunk of chunks) {
    size += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
  }
  return size;
}

/**
 * Sends one request over node:http(s) on the default keep-alive agent and collects the answer.
 * The SDK and the worker use it instead of `fetch`: on Node 20 a keep-alive `fetch` costs ~4× the
 * CPU of this per request (measured in bench/queue.ts's notes), which matters on a hot path such
 * as enqueueing rollouts or storing their results.
 * @throws HttpExchangeError `network` (no connection, reset, malformed answer), `timeout`,
 *   `aborted` (the signal fired; `cause` is its reason), `too-large`
 */
export function httpExchange(exchange: HttpExchangeRequest): Promise<HttpExchangeResponse> {
  const { signal, maxResponseBytes = Number.POSITIVE_INFINITY } = exchange;
  const what = `${exchange.method} ${exchange.url}`;
  if (signal?.aborted === true) {
    return Promise.reject(new HttpExchangeError('aborted', `${what}: aborted`, signal.reason));
  }
  return new Promise((resolve, reject) => {
    let url: URL;
    try {
      url = new URL(exchange.url);
    } catch (cause) {
      reject(new HttpExchangeError('network', `${what}: not a URL`, cause));
      return;
    }
    const chunks = bodyChunks(exchange.body);
    const headers: Record<string, string> = { ...exchange.headers };
    if (chunks.length > 0 || exchange.method === 'PUT' || exchange.method === 'POST') {
      headers['content-length'] = String(sizeOf(chunks));
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (error: HttpExchangeError | undefined, response?: HttpExchangeResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (error !== undefined) {
        request.destroy();
        reject(error);
      } else resolve(response as HttpExchangeResponse);
    };
    const onAbort = () =>
      finish(new HttpExchangeError('aborted', `${what}: aborted`, signal?.reason));
    const request = send(url, { method: exchange.method, headers }, (answer: IncomingMessage) => {
      const declared = Number(answer.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxResponseBytes) {
        finish(tooLarge(what, maxResponseBytes, declared));
        return;
      }
      const received: Buffer[] = [];
      let size = 0;
      answer.on('data', (chunk: Buffer) => {
        size += chunk.byteLength;
        if (size > maxResponseBytes) finish(tooLarge(what, maxResponseBytes));
        else received.push(chunk);
      });
      answer.on('error', (cause) =>
        finish(new HttpExchangeError('network', `${what}: the answer was cut short`, cause)),
      );
      answer.on('aborted', () =>
        finish(new HttpExchangeError('network', `${what}: the answer was cut short`)),
      );
      answer.on('end', () =>
        finish(undefined, {
          status: answer.statusCode ?? 0,
          statusText: answer.statusMessage ?? '',
          headers: answer.headers,
          body: received.length === 1 ? (received[0] as Buffer) : Buffer.concat(received, size),
        }),
      );
    });
    request.on('error', (cause) =>
      finish(new HttpExchangeError('network', `${what}: ${cause.message}`, cause)),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
    if (exchange.timeoutMs !== undefined) {
      const timeoutMs = exchange.timeoutMs;
      timer = setTimeout(
        () => finish(new HttpExchangeError('timeout', `${what}: no answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
    }
    for (const chunk of chunks) request.write(chunk);
    request.end();
  });
}

function tooLarge(what: string, maxBytes: number, declared?: number): HttpExchangeError {
  return new HttpExchangeError(
    'too-large',
    declared === undefined
      ? `${what}: the answer passed ${maxBytes} bytes`
      : `${what}: the answer is ${declared} bytes, more than ${maxBytes}`,
  );
}
