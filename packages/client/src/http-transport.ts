import { ERROR_CODES, FlowfleetError, type ErrorCode } from '@flowfleet/errors';
import {
  ErrorEnvelopeSchema,
  HttpExchangeError,
  httpExchange,
  parseOrThrow,
} from '@flowfleet/protocol';
import type { z } from 'zod';
import { abortableSleep, abortedError } from './abortable-sleep.js';
import type { ResolvedClientOptions } from './client-options.js';
import { fetchWire, type Wire, type WireAnswer } from './fetch-wire.js';

/** Per-call options every client method takes. */
export interface CallOptions {
  /** Aborts the call (`CLIENT_ABORTED`). */
  readonly signal?: AbortSignal;
  /** Bound on each try of this call, body included (default: the client's `timeoutMs`). */
  readonly timeoutMs?: number;
}

/** One HTTP call as the client methods describe it. */
export interface HttpRequest {
  readonly method: 'GET' | 'POST' | 'PUT';
  /** Path and query, already encoded, e.g. `/v1/rollouts/abc`. */
  readonly path: string;
  readonly json?: unknown;
  /** Raw bytes, sent in order as one `application/octet-stream` body. */
  readonly bytes?: Uint8Array | readonly Uint8Array[];
  /** More headers (the transport sets authorization and content-type). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Safe to send again after a network failure or a 429/502/503/504 (GETs, create-once PUTs). */
  readonly idempotent: boolean;
  readonly call?: CallOptions;
}

type Attempt<T> =
  { readonly value: T } | { readonly error: FlowfleetError; readonly retry: boolean };

/** Statuses a proxy or an overloaded coordinator answers; worth another try when idempotent. */
const RETRY_STATUSES = new Set([429, 502, 503, 504]);
const BODY_PREVIEW_CHARS = 2_000;
const decoder = new TextDecoder();

function isKnownCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}

/**
 * The client's HTTP layer: bearer auth, a timeout per try, retry with exponential backoff for
 * idempotent calls, and the mapping of every failure onto a coded error (server envelope →
 * its own code; other error statuses → `CLIENT_HTTP_ERROR`; network → `CLIENT_UNREACHABLE`).
 */
export class HttpTransport {
  readonly #options: ResolvedClientOptions;
  readonly #wire: Wire;

  constructor(options: ResolvedClientOptions) {
    this.#options = options;
    this.#wire = options.fetch === undefined ? httpExchange : fetchWire(options.fetch);
  }

  /**
   * Sends `request` and validates the JSON answer with `schema`.
   * @throws FlowfleetError the server's code, CLIENT_HTTP_ERROR, CLIENT_BAD_RESPONSE,
   *   CLIENT_UNREACHABLE, CLIENT_TIMEOUT, CLIENT_ABORTED
   */
  json<S extends z.ZodType>(request: HttpRequest, schema: S): Promise<z.output<S>> {
    return this.#send(request, (response) => {
      const text = decoder.decode(response.body);
      let value: unknown;
      try {
        value = JSON.parse(text) as unknown;
      } catch (cause) {
        throw new FlowfleetError(
          'CLIENT_BAD_RESPONSE',
          `${request.method} ${request.path} answered ${response.status} with a body that is not JSON`,
          {
            details: { ...this.#where(request), status: response.status, body: preview(text) },
            cause,
          },
        );
      }
      return parseOrThrow(
        schema,
        value,
        'CLIENT_BAD_RESPONSE',
        `response to ${request.method} ${request.path}`,
      );
    });
  }

  /** Sends `request` and answers the body's bytes. @throws as {@link HttpTransport.json} */
  bytes(request: HttpRequest): Promise<Uint8Array> {
    // A plain Uint8Array view: a Buffer's slice() shares memory, a Uint8Array's copies.
    return this.#send(
      request,
      ({ body }) => new Uint8Array(body.buffer, body.byteOffset, body.byteLength),
    );
  }

  /** Sends `request` and answers the body as text. @throws as {@link HttpTransport.json} */
  text(request: HttpRequest): Promise<string> {
    return this.#send(request, (response) => decoder.decode(response.body));
  }

  async #send<T>(request: HttpRequest, read: (response: WireAnswer) => T): Promise<T> {
    const { attempts, baseDelayMs, maxDelayMs } = this.#options.retry;
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.#attempt(request, read);
      if ('value' in outcome) return outcome.value;
      if (!request.idempotent || !outcome.retry || attempt >= attempts) throw outcome.error;
      const delayMs = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
      // Jitter in [½, 1] of the delay so that many trainers do not retry in step.
      await abortableSleep(
        delayMs * (0.5 + Math.random() / 2),
        request.call?.signal,
        `${request.method} ${request.path}`,
      );
    }
  }

  async #attempt<T>(request: HttpRequest, read: (response: WireAnswer) => T): Promise<Attempt<T>> {
    const what = `${request.method} ${request.path}`;
    const caller = request.call?.signal;
    if (caller?.aborted === true) throw abortedError(caller, what);
    const timeoutMs = request.call?.timeoutMs ?? this.#options.timeoutMs;
    const headers: Record<string, string> = { ...request.headers };
    if (this.#options.token !== undefined) {
      headers['authorization'] = `Bearer ${this.#options.token}`;
    }
    let body: string | Uint8Array | readonly Uint8Array[] | undefined;
    if (request.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(request.json);
    } else if (request.bytes !== undefined) {
      headers['content-type'] = 'application/octet-stream';
      body = request.bytes;
    }
    let response: WireAnswer;
    try {
      response = await this.#wire({
        method: request.method,
        url: `${this.#options.baseUrl}${request.path}`,
        headers,
        timeoutMs,
        ...(body === undefined ? {} : { body }),
        ...(caller === undefined ? {} : { signal: caller }),
      });
    } catch (failure) {
      if (!(failure instanceof HttpExchangeError)) throw failure;
      if (failure.kind === 'aborted' && caller !== undefined) throw abortedError(caller, what);
      if (failure.kind === 'timeout') {
        throw new FlowfleetError('CLIENT_TIMEOUT', `${what}: no answer within ${timeoutMs} ms`, {
          details: { ...this.#where(request), what: 'request', timeoutMs },
          cause: failure,
        });
      }
      const cause = failure.cause ?? failure;
      return {
        error: new FlowfleetError(
          'CLIENT_UNREACHABLE',
          `${what}: the coordinator at ${this.#options.baseUrl} is unreachable (${describe(cause)})`,
          { details: this.#where(request), cause },
        ),
        retry: true,
      };
    }
    if (response.status < 200 || response.status > 299) {
      return {
        error: this.#httpError(request, response),
        retry: RETRY_STATUSES.has(response.status),
      };
    }
    return { value: read(response) };
  }

  /** The coded error for a non-2xx answer: the server's own code when it sent a known envelope. */
  #httpError(request: HttpRequest, response: WireAnswer): FlowfleetError {
    const text = decoder.decode(response.body);
    let value: unknown;
    try {
      value = JSON.parse(text) as unknown;
    } catch {
      value = undefined;
    }
    const envelope = ErrorEnvelopeSchema.safeParse(value);
    if (envelope.success && isKnownCode(envelope.data.code)) {
      const { code, message, details } = envelope.data;
      return new FlowfleetError(code, message, {
        details: (details ?? {}) as Readonly<Record<string, unknown>>,
      });
    }
    const what = `${request.method} ${request.path}`;
    return new FlowfleetError(
      'CLIENT_HTTP_ERROR',
      envelope.success
        ? `${what} answered ${response.status} ${envelope.data.code}: ${envelope.data.message}`
        : `${what} answered ${response.status} ${response.statusText}`.trimEnd(),
      {
        details: {
          ...this.#where(request),
          status: response.status,
          ...(envelope.success ? { envelope: envelope.data } : { body: preview(text) }),
        },
      },
    );
  }

  #where(request: HttpRequest): { method: string; url: string } {
    return { method: request.method, url: `${this.#options.baseUrl}${request.path}` };
  }
}

function preview(text: string): string {
  return text.length > BODY_PREVIEW_CHARS ? `${text.slice(0, BODY_PREVIEW_CHARS)}…` : text;
}

function describe(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : '';
  return `${cause.message}${inner}`;
}
