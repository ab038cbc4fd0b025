import { ERROR_CODES, FlowfleetError, type ErrorCode } from '@flowfleet/errors';
import type { JobStatus } from '@flowfleet/protocol';
import { abortableSleep } from './abortable-sleep.js';
import { checkPositive } from './client-options.js';
import type { CallOptions } from './http-transport.js';

/** How to wait for a rollout job. */
export interface WaitForOptions {
  /**
   * How long each status request may wait on the coordinator for a change (a long-poll; default
   * 10 000 ms, at most 30 000). 0 polls instead, with `pollMs`/`maxPollMs`.
   */
  readonly longPollMs?: number;
  /** Called with the status whenever its state, progress or attempt count changes. */
  readonly onProgress?: (status: JobStatus) => void;
  /** Aborts the wait (`CLIENT_ABORTED`); the job itself keeps running. */
  readonly signal?: AbortSignal;
  /** First poll interval (default 250 ms); it grows ×1.5 while nothing changes. */
  readonly pollMs?: number;
  /** Largest poll interval (default 2 000 ms). */
  readonly maxPollMs?: number;
  /** Give up after this long (`CLIENT_TIMEOUT`); default: wait as long as it takes. */
  readonly timeoutMs?: number;
}

/** What waiting needs: the job's status, long-polled when `wait` is given. */
export interface JobStatusSource {
  status(
    id: string,
    call?: CallOptions,
    wait?: { readonly waitMs: number; readonly seen: JobStatus },
  ): Promise<JobStatus>;
}

/** Defaults of {@link WaitForOptions}. */
export const WAIT_DEFAULTS = Object.freeze({ pollMs: 250, maxPollMs: 2_000, longPollMs: 10_000 });

/** The longest long-poll the coordinator takes. */
const MAX_LONG_POLL_MS = 30_000;

function changeKey(status: JobStatus): string {
  const { step, steps } = status.progress;
  return `${status.status} ${step}/${steps} ${status.attempts}`;
}

/** The coded error for a job that failed: CLIENT_JOB_FAILED carrying the server's envelope. */
export function jobFailedError(status: JobStatus): FlowfleetError {
  const envelope = status.error ?? { code: 'INTERNAL_ERROR', message: 'failed', details: {} };
  const known = Object.hasOwn(ERROR_CODES, envelope.code);
  return new FlowfleetError(
    'CLIENT_JOB_FAILED',
    `rollout ${status.id} failed after ${status.attempts} attempt(s): ${envelope.code}: ${envelope.message}`,
    {
      details: {
        id: status.id,
        lane: status.lane,
        attempts: status.attempts,
        error: envelope,
        ...(status.worker !== undefined ? { worker: status.worker } : {}),
      },
      ...(known
        ? {
            cause: new FlowfleetError(envelope.code as ErrorCode, envelope.message, {
              details: (envelope.details ?? {}) as Readonly<Record<string, unknown>>,
            }),
          }
        : {}),
    },
  );
}

/**
 * Waits until job `id` completes (resolves with its final status) or fails. By default each
 * request long-polls: the coordinator answers when the job changes (a step, its state, a retry),
 * so a change is seen at once and an unchanged job costs one request per `longPollMs`. With
 * `longPollMs: 0` it polls, starting at `pollMs` and backing off ×1.5 up to `maxPollMs` while
 * nothing changes; any change resets it.
 * @throws FlowfleetError CLIENT_JOB_FAILED (the server's envelope in `details.error`),
 *   CLIENT_TIMEOUT, CLIENT_ABORTED, CLIENT_INVALID_OPTIONS, or any error of `status`
 */
export async function waitForJob(
  source: JobStatusSource,
  id: string,
  options: WaitForOptions = {},
): Promise<JobStatus> {
  const pollMs = checkPositive(options.pollMs ?? WAIT_DEFAULTS.pollMs, 'pollMs');
  const maxPollMs = Math.max(
    pollMs,
    checkPositive(options.maxPollMs ?? WAIT_DEFAULTS.maxPollMs, 'maxPollMs'),
  );
  const timeoutMs =
    options.timeoutMs === undefined ? Infinity : checkPositive(options.timeoutMs, 'timeoutMs');
  const longPollMs = options.longPollMs ?? WAIT_DEFAULTS.longPollMs;
  if (!Number.isInteger(longPollMs) || longPollMs < 0 || longPollMs > MAX_LONG_POLL_MS) {
    throw new FlowfleetError(
      'CLIENT_INVALID_OPTIONS',
      `longPollMs must be an integer in [0, ${MAX_LONG_POLL_MS}], got ${longPollMs}`,
      { details: { option: 'longPollMs', value: longPollMs } },
    );
  }
  const deadline = Date.now() + timeoutMs;
  const { signal } = options;
  const what = `waiting for rollout ${id}`;
  let intervalMs = pollMs;
  let lastKey: string | undefined;
  let last: JobStatus | undefined;
  const call = signal === undefined ? {} : { signal };
  for (;;) {
    const asked = Date.now();
    const waitMs = Math.floor(Math.min(longPollMs, Math.max(0, deadline - asked)));
    const longPolled = last !== undefined && waitMs > 0;
    let status = longPolled
      ? await source.status(id, call, { waitMs, seen: last! })
      : await source.status(id, call);
    last = status;
    // An unchanged answer well before waitMs means nobody waited (e.g. an older coordinator):
    // then sleep as a poll would, rather than ask again at once.
    const waited = longPolled && Date.now() - asked >= waitMs * 0.9;
    // The coordinator reads a job's record and its state in two steps, so the first answer that
    // says `failed` may carry the record from just before the failure (no error yet): a second
    // read is then consistent.
    if (status.status === 'failed') status = await source.status(id, call);
    const key = changeKey(status);
    const changed = key !== lastKey;
    if (changed) {
      lastKey = key;
      intervalMs = pollMs;
      options.onProgress?.(status);
    } else {
      intervalMs = Math.min(maxPollMs, intervalMs * 1.5);
    }
    if (status.status === 'completed') return status;
    if (status.status === 'failed') throw jobFailedError(status);
    const remainingMs = deadline - Date.now();
    if (remainingMs <= 0) {
      throw new FlowfleetError(
        'CLIENT_TIMEOUT',
        `rollout ${id} did not finish within ${timeoutMs} ms`,
        {
          details: { what: 'waitFor', id, timeoutMs, last: status },
        },
      );
    }
    // A long-poll answers at a change (ask again at once) or after waiting; a poll sleeps first.
    if (longPollMs === 0 || (longPolled && !changed && !waited)) {
      await abortableSleep(Math.min(intervalMs, remainingMs), signal, what);
    }
  }
}
