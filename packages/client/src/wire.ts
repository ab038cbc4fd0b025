/**
 * A body read from its source while it is sent (a checkpoint shard larger than a buffer may be):
 * `open` is called once per try, so a retried request reads it again from the start.
 */
export interface StreamedBody {
  /** Its exact length, sent as Content-Length. */
  readonly sizeBytes: number;
  open(): AsyncIterable<Uint8Array>;
}

/** True when `body` is a {@link StreamedBody}. */
export function isStreamedBody(body: WireRequest['body']): body is StreamedBody {
  return typeof body === 'object' && !(body instanceof Uint8Array) && 'open' in body;
}

/** One HTTP request (its body in memory, or streamed from its source) answered whole. */
export interface WireRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path and query under the wire's base URL, already encoded, e.g. `/v1/rollouts/abc`. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Sent in order as one body; Content-Length is set from their total. */
  readonly body?: string | Uint8Array | readonly Uint8Array[] | StreamedBody;
  readonly signal?: AbortSignal;
  /** Bound on the whole exchange: connect, send, and the last byte of the answer. */
  readonly timeoutMs?: number;
  /** Refuse an answer whose body passes this size (by Content-Length up front, or as it arrives). */
  readonly maxResponseBytes?: number;
}

/** An answer of any status (the transport decides what a 4xx or 5xx means). */
export interface WireAnswer {
  readonly status: number;
  /** The reason phrase when the wire has one (fetch does; undici does not). */
  readonly statusText?: string;
  /** The `Retry-After` header of the answer, when it has one. */
  readonly retryAfter?: string;
  readonly body: Uint8Array;
}

/** Why an exchange produced no answer. */
export type WireFailure = 'network' | 'timeout' | 'aborted' | 'too-large';

/**
 * An exchange that produced no answer; `cause` is the underlying error or the abort reason.
 * `unsent` is true when the request provably never reached the server (the connection was
 * refused or never resolved), so even a non-idempotent request may be sent again.
 */
export class WireError extends Error {
  readonly kind: WireFailure;
  readonly unsent: boolean;

  constructor(kind: WireFailure, message: string, options: { cause?: unknown; unsent?: boolean }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WireError';
    this.kind = kind;
    this.unsent = options.unsent ?? false;
  }
}

/** Sends requests to one base URL (the coordinator's). */
export interface Wire {
  /**
   * Sends one request and collects the whole answer, whatever its status.
   * @throws WireError `network`, `timeout`, `aborted` or `too-large`
   */
  send(request: WireRequest): Promise<WireAnswer>;
  /** Closes the wire's connections (requests in flight finish first). Idempotent. */
  close(): Promise<void>;
}

/** The size in bytes of a request body. */
export function bodyBytes(body: NonNullable<WireRequest['body']>): number {
  if (typeof body === 'string') return Buffer.byteLength(body);
  if (body instanceof Uint8Array) return body.byteLength;
  if (isStreamedBody(body)) return body.sizeBytes;
  let size = 0;
  for (const part of body) size += part.byteLength;
  return size;
}

/** The error for an answer past `maxBytes` (`declared`: its Content-Length, when known). */
export function tooLargeError(what: string, maxBytes: number, declared?: number): WireError {
  return new WireError(
    'too-large',
    declared === undefined
      ? `${what}: the answer passed ${maxBytes} bytes`
      : `${what}: the answer is ${declared} bytes, more than ${maxBytes}`,
    {},
  );
}

/** Whether `signal` has fired (a function, so a check made earlier does not narrow it). */
export function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}
