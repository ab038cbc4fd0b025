import { HttpExchangeError, type HttpExchangeRequest } from '@flowfleet/protocol';

/** An answer as the transport reads it, whatever sent the request. */
export interface WireAnswer {
  readonly status: number;
  readonly statusText: string;
  readonly body: Uint8Array;
}

/**
 * Sends one request and collects the whole answer (`httpExchange` by default).
 * @throws HttpExchangeError `network`, `timeout` or `aborted`
 */
export type Wire = (request: HttpExchangeRequest) => Promise<WireAnswer>;

function joined(body: HttpExchangeRequest['body']): string | Uint8Array | undefined {
  if (body === undefined || typeof body === 'string' || body instanceof Uint8Array) return body;
  return Buffer.concat(body as readonly Uint8Array[]);
}

/** A Wire over a caller-supplied fetch, failing the way `httpExchange` does. */
export function fetchWire(fetchFn: typeof fetch): Wire {
  return async (request) => {
    const what = `${request.method} ${request.url}`;
    const caller = request.signal;
    const timeout =
      request.timeoutMs === undefined ? undefined : AbortSignal.timeout(request.timeoutMs);
    const signals = [caller, timeout].filter((s): s is AbortSignal => s !== undefined);
    const body = joined(request.body);
    try {
      const response = await fetchFn(request.url, {
        method: request.method,
        headers: { ...request.headers },
        ...(body === undefined ? {} : { body }),
        ...(signals.length === 0 ? {} : { signal: AbortSignal.any(signals) }),
      });
      return {
        status: response.status,
        statusText: response.statusText,
        body: new Uint8Array(await response.arrayBuffer()),
      };
    } catch (cause) {
      if (caller?.aborted === true) throw new HttpExchangeError('aborted', what, caller.reason);
      if (timeout?.aborted === true) throw new HttpExchangeError('timeout', what, cause);
      throw new HttpExchangeError('network', what, cause);
    }
  };
}
