import { FlowfleetError } from '@flowfleet/errors';

/** The coded error for a fired AbortSignal; its cause is the signal's reason. */
export function abortedError(signal: AbortSignal, what: string): FlowfleetError {
  return new FlowfleetError('CLIENT_ABORTED', `${what} was aborted`, {
    details: { what },
    cause: signal.reason,
  });
}

/**
 * Resolves after `ms` milliseconds, or rejects at once when `signal` fires (the timer is cleared,
 * so an aborted wait keeps nothing alive).
 * @throws FlowfleetError CLIENT_ABORTED
 */
export function abortableSleep(ms: number, signal: AbortSignal | undefined, what: string) {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(abortedError(signal, what));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortedError(signal as AbortSignal, what));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
