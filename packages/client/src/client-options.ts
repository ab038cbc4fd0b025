import { FlowfleetError } from '@flowfleet/errors';

/** When to try an idempotent request again (network failures, 429, 502, 503, 504). */
export interface RetryOptions {
  /** Tries in all, the first included (default 3; 1 = never retry). */
  readonly attempts?: number;
  /** Delay before the first retry; doubles each time (default 200 ms). */
  readonly baseDelayMs?: number;
  /** Largest delay between tries (default 2 000 ms). */
  readonly maxDelayMs?: number;
}

/** How to reach a coordinator. */
export interface FlowfleetClientOptions {
  /** The coordinator's base URL, e.g. `http://127.0.0.1:8080`. */
  readonly baseUrl: string;
  /** Bearer token (trainer role for mutations, viewer for reads); omit when auth is off. */
  readonly token?: string;
  /**
   * A fetch to send requests with (a proxy-aware or instrumented one, a test double). Default:
   * node:http(s) on Node's keep-alive agent, which costs a quarter of the CPU of Node 20's
   * `fetch` per request.
   */
  readonly fetch?: typeof fetch;
  /** Bound on one request, body included (default 30 000 ms); a call may pass its own. */
  readonly timeoutMs?: number;
  /** Retry of idempotent requests; `false` turns it off. */
  readonly retry?: RetryOptions | false;
}

/** The options with every default filled in. */
export interface ResolvedClientOptions {
  readonly baseUrl: string;
  readonly token: string | undefined;
  /** The caller's fetch, or undefined for node:http. */
  readonly fetch: typeof fetch | undefined;
  readonly timeoutMs: number;
  readonly retry: Required<RetryOptions>;
}

/** Defaults of the client options. */
export const CLIENT_DEFAULTS = Object.freeze({
  timeoutMs: 30_000,
  retry: Object.freeze({ attempts: 3, baseDelayMs: 200, maxDelayMs: 2_000 }),
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
  const retry: RetryOptions = options.retry === false ? { attempts: 1 } : (options.retry ?? {});
  return {
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    token: options.token,
    fetch: options.fetch,
    timeoutMs: checkPositive(options.timeoutMs ?? CLIENT_DEFAULTS.timeoutMs, 'timeoutMs'),
    retry: {
      attempts: checkPositive(
        retry.attempts ?? CLIENT_DEFAULTS.retry.attempts,
        'retry.attempts',
        true,
      ),
      baseDelayMs: checkPositive(
        retry.baseDelayMs ?? CLIENT_DEFAULTS.retry.baseDelayMs,
        'retry.baseDelayMs',
      ),
      maxDelayMs: checkPositive(
        retry.maxDelayMs ?? CLIENT_DEFAULTS.retry.maxDelayMs,
        'retry.maxDelayMs',
      ),
    },
  };
}
