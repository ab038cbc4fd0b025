import { ERROR_CODES, FlowfleetError, type ErrorCode } from '@flowfleet/errors';
import { ErrorEnvelopeSchema, parseOrThrow } from '@flowfleet/protocol';
import type { z } from 'zod';
import { abortedError } from './abortable-sleep.js';
import {
  resolveRetryPolicy,
  type ResolvedClientOptions,
  type RetryOptions,
} from './client-options.js';
import { fetchWire } from './fetch-wire.js';
import {
  isRetryableFailure,
  parseRetryAfter,
  runWithRetry,
  type FailedTry,
  type RetryPolicy,
} from './retry-policy.js';
import { undiciWire } from './undici-wire.js';
import {
  WireError,
  type StreamedBody,
  type Wire,
  type WireAnswer,
  type WireRequest,
} from './wire.js';

/** Per-call options every client method takes. */
export interface CallOptions {
  /** Aborts the call, a wait between tries included (`CLIENT_ABORTED`). */
  readonly signal?: AbortSignal;
  /** Bound on each try of this call, body included (default: the client's `timeoutMs`). */
  readonly timeoutMs?: number;
  /** This call's retry, laid over the client's (`false`: one try). */
  readonly retry?: RetryOptions | false;
  /** Refuse an answer larger than this (`CLIENT_RESPONSE_TOO_LARGE`, never retried). */
  readonly maxResponseBytes?: number;
}

/** One HTTP call as the client methods describe it. */
export interface HttpRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path and query, already encoded, e.g. `/v1/rollouts/abc`. */
  readonly path: string;
  readonly json?: unknown;
  /**
   * Raw bytes, sent in order as one `application/octet-stream` body — in memory, or read from
   * their source as they are sent (`StreamedBody`, opened again on each try).
   */
  readonly bytes?: Uint8Array | readonly Uint8Array[] | StreamedBody;
  /** More headers (the transport sets authorization and content-type). */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Safe to send again after a failure that may have reached the server: reads, content-addressed
   * or create-once uploads, and requests carrying an Idempotency-Key the server honours.
   */
  readonly idempotent: boolean;
  readonly call?: CallOptions;
}

const BODY_PREVIEW_CHARS = 2_000;
const decoder = new TextDecoder();

function isKnownCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}

/**
 * The one coordinator transport (the SDK's and the worker's): bearer auth, a timeout per try,
 * the retry policy of retry-policy.ts, and the mapping of every failure onto a coded error
 * (server envelope → its own code; other error statuses → `CLIENT_HTTP_ERROR`; network →
 * `CLIENT_UNREACHABLE`; `CLIENT_TIMEOUT`, `CLIENT_ABORTED`, `CLIENT_RESPONSE_TOO_LARGE`).
 * Requests go over undici unless the options carry a `fetch`.
 */
export class HttpTransport {
  readonly #options: ResolvedClientOptions;
  readonly #wire: Wire;

  constructor(options: ResolvedClientOptions) {
    this.#options = options;
    this.#wire =
      options.fetch === undefined
        ? undiciWire(options.baseUrl)
        : fetchWire(options.fetch, options.baseUrl);
  }

  /**
   * Sends `request` and validates the JSON answer with `schema`.
   * @throws FlowfleetError the server's code, CLIENT_HTTP_ERROR, CLIENT_BAD_RESPONSE,
   *   CLIENT_UNREACHABLE, CLIENT_TIMEOUT, CLIENT_ABORTED, CLIENT_RESPONSE_TOO_LARGE,
   *   CLIENT_INVALID_OPTIONS (a malformed `call.retry`)
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

  /** Closes the connections to the coordinator (calls in flight finish first). Idempotent. */
  close(): Promise<void> {
    return this.#wire.close();
  }

  async #send<T>(request: HttpRequest, read: (response: WireAnswer) => T): Promise<T> {
    const call = request.call;
    const policy: RetryPolicy =
      call?.retry === undefined
        ? this.#options.retry
        : resolveRetryPolicy(call.retry, this.#options.retry, 'call.retry');
    const onRetry = this.#options.onRetry;
    return runWithRetry(() => this.#attempt(request, read), {
      policy,
      signal: call?.signal,
      what: `${request.method} ${request.path}`,
      onRetry:
        onRetry === undefined
          ? undefined
          : (attempt, delayMs, error) =>
              onRetry({ method: request.method, path: request.path, attempt, delayMs, error }),
    });
  }

  async #attempt<T>(
    request: HttpRequest,
    read: (response: WireAnswer) => T,
  ): Promise<{ readonly value: T } | FailedTry> {
    const what = `${request.method} ${request.path}`;
    const call = request.call;
    const caller = call?.signal;
    if (caller?.aborted === true) throw abortedError(caller, what);
    const timeoutMs = call?.timeoutMs ?? this.#options.timeoutMs;
    const headers: Record<string, string> = { ...request.headers };
    if (this.#options.token !== undefined) {
      headers['authorization'] = `Bearer ${this.#options.token}`;
    }
    let body: WireRequest['body'];
    if (request.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(request.json);
    } else if (request.bytes !== undefined) {
      headers['content-type'] = 'application/octet-stream';
      body = request.bytes;
    }
    let response: WireAnswer;
    try {
      response = await this.#wire.send({
        method: request.method,
        path: request.path,
        headers,
        timeoutMs,
        ...(body === undefined ? {} : { body }),
        ...(caller === undefined ? {} : { signal: caller }),
        ...(call?.maxResponseBytes === undefined
          ? {}
          : { maxResponseBytes: call.maxResponseBytes }),
      });
    } catch (failure) {
      if (!(failure instanceof WireError)) throw failure;
      return this.#wireFailure(request, failure, timeoutMs);
    }
    if (response.status < 200 || response.status > 299) {
      const retryAfterMs = parseRetryAfter(response.retryAfter);
      return {
        error: this.#httpError(request, response),
        retryable: isRetryableFailure(response.status, request.idempotent),
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      };
    }
    return { value: read(response) };
  }

  /** The coded error of a try that got no answer; aborts are thrown (never retried). */
  #wireFailure(request: HttpRequest, failure: WireError, timeoutMs: number): FailedTry {
    const what = `${request.method} ${request.path}`;
    const caller = request.call?.signal;
    switch (failure.kind) {
      case 'aborted':
        throw caller === undefined ? failure : abortedError(caller, what);
      case 'too-large': {
        const maxBytes = request.call?.maxResponseBytes;
        throw new FlowfleetError('CLIENT_RESPONSE_TOO_LARGE', `${what}: ${failure.message}`, {
          details: { ...this.#where(request), maxBytes },
          cause: failure,
        });
      }
      case 'timeout':
        return {
          error: new FlowfleetError('CLIENT_TIMEOUT', `${what}: no answer within ${timeoutMs} ms`, {
            details: { ...this.#where(request), what: 'request', timeoutMs },
            cause: failure,
          }),
          retryable: isRetryableFailure('timeout', request.idempotent),
        };
      case 'network': {
        const cause = failure.cause ?? failure;
        return {
          error: new FlowfleetError(
            'CLIENT_UNREACHABLE',
            `${what}: the coordinator at ${this.#options.baseUrl} is unreachable (${describe(cause)})`,
            { details: this.#where(request), cause },
          ),
          retryable: isRetryableFailure('network', request.idempotent, failure.unsent),
        };
      }
    }
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
        : `${what} answered ${response.status} ${response.statusText ?? ''}`.trimEnd(),
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
