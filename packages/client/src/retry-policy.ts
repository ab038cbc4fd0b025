import type { FlowfleetError } from '@flowfleet/errors';
import { abortableSleep } from './abortable-sleep.js';

/** When and how often a failed request is sent again (README "Retry policy"). */
export interface RetryPolicy {
  /** Tries in all, the first included (1 = never retry; Infinity = until the deadline). */
  readonly attempts: number;
  /** Delay before the first retry; doubles each time, with jitter in [½, 1] of it. */
  readonly baseDelayMs: number;
  /** Largest delay between tries. */
  readonly maxDelayMs: number;
  /** No retry starts later than this after the first try began (0: never retry). */
  readonly deadlineMs: number;
}

/** How one try failed, as the policy sees it. */
export interface FailedTry {
  readonly error: FlowfleetError;
  /** Whether sending the request again is worth it and safe (see {@link isRetryableFailure}). */
  readonly retryable: boolean;
  /** The server's `Retry-After`, in ms, when it sent one. */
  readonly retryAfterMs?: number;
}

/** What a retry hook is told before each wait. */
export interface RetryEvent {
  readonly method: string;
  readonly path: string;
  /** The try that failed (1 = the first). */
  readonly attempt: number;
  readonly delayMs: number;
  readonly error: FlowfleetError;
}

/**
 * Statuses that say "not now": a proxy, an overloaded or restarting coordinator, a slow body, a
 * blob store that is full (507: space comes back as retention frees it or an operator acts).
 */
const RETRY_STATUSES: ReadonlySet<number> = new Set([408, 429, 502, 503, 504, 507]);

/**
 * Whether a failed try is sent again. `failure` is `network` (no connection, reset, cut answer),
 * `timeout` (the try passed its timeoutMs), or an answer's HTTP status. An idempotent request
 * (reads, content-addressed uploads, the create-once result upload, an enqueue carrying its
 * Idempotency-Key) is retried on network failures, timeouts and 408/429/502/503/504/507; any request
 * is retried when it provably never left (`unsent`: connection refused, name not resolved).
 * Never retried: other 4xx (the request is wrong), 500 and other 5xx (a defect or a permanent
 * refusal answers the same again), an answer too large, an abort.
 */
export function isRetryableFailure(
  failure: 'network' | 'timeout' | number,
  idempotent: boolean,
  unsent = false,
): boolean {
  if (unsent) return true;
  if (!idempotent) return false;
  return typeof failure === 'number' ? RETRY_STATUSES.has(failure) : true;
}

/** A `Retry-After` value (seconds, or an HTTP date) in ms from now; undefined when unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // An HTTP date names its day and month (Date.parse alone would take "-1" as a year).
  if (!/^[A-Za-z]{3}, /.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The wait before retry number `retry` (1 = the first): exponential, capped, jittered. */
export function backoffDelayMs(policy: RetryPolicy, retry: number, random = Math.random): number {
  const delayMs = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  // Jitter so that many trainers or workers failed by one outage do not retry in step.
  return delayMs * (0.5 + random() / 2);
}

/** What {@link runWithRetry} needs besides the try itself. */
export interface RetryRun {
  readonly policy: RetryPolicy;
  readonly signal?: AbortSignal | undefined;
  /** Names the call in abort errors, e.g. `GET /v1/rollouts/abc`. */
  readonly what: string;
  readonly onRetry?:
    ((attempt: number, delayMs: number, error: FlowfleetError) => void) | undefined;
}

/**
 * Runs `tryOnce` until it answers a value, fails in a way that is not retryable, runs out of
 * attempts, or the deadline passes; then throws the last try's error. A wait honours the
 * server's Retry-After when it is longer than the backoff, and never passes the deadline.
 * @throws FlowfleetError the last try's error, or CLIENT_ABORTED when `signal` fires in a wait
 */
export async function runWithRetry<T>(
  tryOnce: () => Promise<{ readonly value: T } | FailedTry>,
  run: RetryRun,
): Promise<T> {
  const { policy } = run;
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    const outcome = await tryOnce();
    if ('value' in outcome) return outcome.value;
    const remainingMs = policy.deadlineMs - (Date.now() - started);
    if (!outcome.retryable || attempt >= policy.attempts || remainingMs <= 0) throw outcome.error;
    const delayMs = Math.min(
      remainingMs,
      Math.max(backoffDelayMs(policy, attempt), outcome.retryAfterMs ?? 0),
    );
    run.onRetry?.(attempt, delayMs, outcome.error);
    await abortableSleep(delayMs, run.signal, run.what);
  }
}
