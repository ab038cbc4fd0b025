import { ERROR_CODES, FlowfleetError, type ErrorCode } from '@flowfleet/errors';
import type { JobStatus } from '@flowfleet/protocol';
import { abortableSleep } from './abortable-sleep.js';
import { checkPositive } from './client-options.js';
import type { CallOptions } from './http-transport.js';

/** How to wait for a rollout job. */
export interface WaitForOptions {
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

/** What waiting needs: the job's status. */
export interface JobStatusSource {
  status(id: string, call?: CallOptions): Promise<JobStatus>;
}

/** Defaults of {@link WaitForOptions}. */
export const WAIT_DEFAULTS = Object.freeze({ pollMs: 250, maxPollMs: 2_000 });

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
 * Polls job `id` until it completes (resolves with its final status) or fails. Polling starts
 * at `pollMs` and backs off ×1.5 up to `maxPollMs` while nothing changes; any change resets it.
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
  const deadline = Date.now() + timeoutMs;
  const { signal } = options;
  const what = `waiting for rollout ${id}`;
  let intervalMs = pollMs;
  let lastKey: string | undefined;
  const call = signal === undefined ? {} : { signal };
  for (;;) {
    let status = await source.status(id, call);
    // The coordinator reads a job's record and its state in two steps, so the first answer that
    // says `failed` may carry the record from just before the failure (no error yet): a second
    // read is then consistent.
    if (status.status === 'failed') status = await source.status(id, call);
    const key = changeKey(status);
    if (key !== lastKey) {
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
    await abortableSleep(Math.min(intervalMs, remainingMs), signal, what);
  }
}
