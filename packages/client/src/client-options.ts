import { FlowfleetError } from '@flowfleet/errors';
import type { RetryEvent, RetryPolicy } from './retry-policy.js';

/**
 * How often a failed idempotent request is tried again (which failures retry: README "Retry
 * policy"); a call may pass its own in `CallOptions.retry`.
 */
export interface RetryOptions {
  /** Tries in all, the first included (default 3; 1 = never retry; Infinity = until the deadline). */
  readonly attempts?: number;
  /** Delay before the first retry; doubles each time, jittered to [½, 1] of it (default 200 ms). */
  readonly baseDelayMs?: number;
  /** Largest delay between tries (default 2 000 ms; a server's Retry-After may ask for more). */
  readonly maxDelayMs?: number;
  /** No retry starts later than this after the first try began (default 60 000 ms). */
  readonly deadlineMs?: number;
}

/** How to reach a coordinator. */
export interface FlowfleetClientOptions {
  /** The coordinator's base URL, e.g. `http://127.0.0.1:8080`. */
  readonly baseUrl: string;
  /** Bearer token (trainer role for mutations, viewer for reads); omit when auth is off. */
  readonly token?: string;
  /**
   * A fetch to send requests with (a proxy-aware or instrumented one, a test double). Default:
   * undici (Node's own HTTP engine) on a keep-alive pool, which costs a third of the CPU of
   * Node 20's `fetch` per small request (bench:http).
   */
  readonly fetch?: typeof fetch;
  /** Bound on one try of a request, body included (default 30 000 ms); a call may pass its own. */
  readonly timeoutMs?: number;
  /** Retry of idempotent requests; `false` turns it off. */
  readonly retry?: RetryOptions | false;
  /** Called before each wait for a retry (for logging). */
  readonly onRetry?: (event: RetryEvent) => void;
}

/** The options with every default filled in. */
export interface ResolvedClientOptions {
  readonly baseUrl: string;
  readonly token: string | undefined;
  /** The caller's fetch, or undefined for undici. */
  readonly fetch: typeof fetch | undefined;
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  readonly onRetry: ((event: RetryEvent) => void) | undefined;
}

/** Defaults of the client options. */
export const CLIENT_DEFAULTS = Object.freeze({
  timeoutMs: 30_000,
  retry: Object.freeze({ attempts: 3, baseDelayMs: 200, maxDelayMs: 2_000, deadlineMs: 60_000 }),
});

function invalid(message: string, option: string): FlowfleetError {
  return new FlowfleetError('CLIENT_INVALID_OPTIONS', message, { details: { option } });
}

/**
 * Checks a positive finite number (or a positive integer when `integer`).
 * @throws FlowfleetError CLIENT_INVALID_OPTIONS
 */
export function checkPositive(value: number, option: string, integer = false): number {
  const ok =
    typeof value === 'number' &&
    Number.isFinite(value) &&
    value > 0 &&
    (!integer || Number.isInteger(value));
  if (!ok) {
    throw invalid(
      `${option} must be a positive ${integer ? 'integer' : 'number'}, got ${String(value)}`,
      option,
    );
  }
  return value;
}

/**
 * `options` laid over `base` (each field checked); `false` means one try.
 * @throws FlowfleetError CLIENT_INVALID_OPTIONS
 */
export function resolveRetryPolicy(
  options: RetryOptions | false | undefined,
  base: RetryPolicy = CLIENT_DEFAULTS.retry,
  option = 'retry',
): RetryPolicy {
  if (options === false) return { ...base, attempts: 1 };
  const attempts = options?.attempts ?? base.attempts;
  const deadlineMs = options?.deadlineMs ?? base.deadlineMs;
  if (!(attempts === Number.POSITIVE_INFINITY || (Number.isInteger(attempts) && attempts > 0))) {
    throw invalid(
      `${option}.attempts must be a positive integer or Infinity, got ${String(attempts)}`,
      `${option}.attempts`,
    );
  }
  if (typeof deadlineMs !== 'number' || !Number.isFinite(deadlineMs) || deadlineMs < 0) {
    throw invalid(
      `${option}.deadlineMs must be a finite number ≥ 0, got ${String(deadlineMs)}`,
      `${option}.deadlineMs`,
    );
  }
  return {
    attempts,
    baseDelayMs: checkPositive(options?.baseDelayMs ?? base.baseDelayMs, `${option}.baseDelayMs`),
    maxDelayMs: checkPositive(options?.maxDelayMs ?? base.maxDelayMs, `${option}.maxDelayMs`),
    deadlineMs,
  };
}

/**
 * The options with defaults applied; the base URL loses its trailing slashes.
 * @throws FlowfleetError CLIENT_INVALID_OPTIONS when the base URL is not http(s), a bound is not
 *   positive, the token is empty, or `fetch` is not a function
 */
export function resolveClientOptions(options: FlowfleetClientOptions): ResolvedClientOptions {
  let url: URL;
  try {
    url = new URL(options.baseUrl);
  } catch (cause) {
    throw new FlowfleetError(
      'CLIENT_INVALID_OPTIONS',
      `baseUrl is not a URL: ${String(options.baseUrl)}`,
      { details: { option: 'baseUrl' }, cause },
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalid(`baseUrl must be http: or https:, got ${url.protocol}`, 'baseUrl');
  }
  if (options.token !== undefined && (typeof options.token !== 'string' || options.token === '')) {
    throw invalid('token must be a non-empty string when given', 'token');
  }
  if (options.fetch !== undefined && typeof options.fetch !== 'function') {
    throw invalid('fetch must be a function when given', 'fetch');
  }
  if (options.onRetry !== undefined && typeof options.onRetry !== 'function') {
    throw invalid('onRetry must be a function when given', 'onRetry');
  }
  return {
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    token: options.token,
    fetch: options.fetch,
    timeoutMs: checkPositive(options.timeoutMs ?? CLIENT_DEFAULTS.timeoutMs, 'timeoutMs'),
    retry: resolveRetryPolicy(options.retry),
    onRetry: options.onRetry,
  };
}
