/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** How `retryWithBackoff` retries. */
export interface RetryOptions {
  /** Give up once this much time has passed since the first attempt (the last error is thrown). */
  readonly deadlineMs: number;
  /** First delay; doubles up to `maxDelayMs`. */
  readonly initialDelayMs?: number;
  readonly maxDelayMs?: number;
  /** Only errors this accepts are retried; others are thrown at once. */
  readonly isRetryable: (error: unknown) => boolean;
  readonly signal?: AbortSignal;
  /** Called before each wait (for logging). */
  readonly onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
}

/**
 * Runs `attempt` until it succeeds, throws a non-retryable error, or the deadline passes.
 * Throws the signal's reason when it aborts during a wait.
 */
export async function retryWithBackoff<T>(
  attempt: () => Promise<T>,
  options: RetryOptions,
): Promise<T> {
  const started = Date.now();
  let delayMs = options.initialDelayMs ?? 200;
  const maxDelayMs = options.maxDelayMs ?? 5_000;
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      const remaining = options.deadlineMs - (Date.now() - started);
      if (!options.isRetryable(error) || remaining <= 0 || options.signal?.aborted === true) {
        throw error;
      }
      const wait = Math.min(delayMs, maxDelayMs, remaining);
      options.onRetry?.(error, n, wait);
      await sleep(wait, options.signal);
      delayMs *= 2;
    }
  }
}
