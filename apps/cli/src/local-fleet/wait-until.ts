import { setTimeout as sleep } from 'node:timers/promises';
import { FlowfleetError } from '@flowfleet/errors';

/** How to poll. */
export interface WaitUntilOptions {
  /** What is awaited, for the timeout message. */
  readonly what: string;
  readonly timeoutMs: number;
  /** Delay between checks (default 100 ms). */
  readonly intervalMs?: number;
  readonly signal?: AbortSignal;
}

/**
 * Polls `check` until it returns a value other than undefined. A check that throws ends the wait
 * with that error (so a check can fail fast, e.g. when a child has exited).
 * @throws FlowfleetError CLI_START_TIMEOUT after the deadline; the signal's reason when aborted
 */
export async function waitUntil<T>(
  check: () => Promise<T | undefined> | T | undefined,
  options: WaitUntilOptions,
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    options.signal?.throwIfAborted();
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      throw new FlowfleetError(
        'CLI_START_TIMEOUT',
        `timed out after ${options.timeoutMs} ms waiting for ${options.what}`,
        { details: { what: options.what, timeoutMs: options.timeoutMs } },
      );
    }
    await sleep(options.intervalMs ?? 100, undefined, { signal: options.signal });
  }
}
