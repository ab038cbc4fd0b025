import {
  isAborted,
  isStreamedBody,
  tooLargeError,
  WireError,
  type Wire,
  type WireRequest,
} from './wire.js';

function joined(body: WireRequest['body']): string | Uint8Array | undefined {
  if (body === undefined || typeof body === 'string' || body instanceof Uint8Array) return body;
  if (isStreamedBody(body)) throw new Error('a streamed body is read by readWhole first');
  return Buffer.concat(body);
}

/**
 * A streamed body read whole: fetch streams a request body only chunked and half-duplex (not
 * everywhere), so big files go over the undici wire (the default).
 */
async function readWhole(body: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const part of body) parts.push(part);
  return Buffer.concat(parts);
}

/** Reads a fetch answer's body, refusing it once it passes `maxBytes`. */
async function readCapped(response: Response, maxBytes: number, what: string): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel();
    throw tooLargeError(what, maxBytes, declared);
  }
  if (maxBytes === Number.POSITIVE_INFINITY || response.body === null) {
    return new Uint8Array(await response.arrayBuffer());
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      await response.body.cancel().catch(() => undefined);
      throw tooLargeError(what, maxBytes);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/**
 * A wire over a caller-supplied fetch (a proxy-aware or instrumented one, a test double),
 * failing the way the default wire does.
 */
export function fetchWire(fetchFn: typeof fetch, baseUrl: string): Wire {
  return {
    send: async (request) => {
      const url = `${baseUrl}${request.path}`;
      const what = `${request.method} ${url}`;
      const caller = request.signal;
      if (caller?.aborted === true) {
        throw new WireError('aborted', `${what}: aborted`, { cause: caller.reason, unsent: true });
      }
      const timeout =
        request.timeoutMs === undefined ? undefined : AbortSignal.timeout(request.timeoutMs);
      const signals = [caller, timeout].filter((s): s is AbortSignal => s !== undefined);
      const body = isStreamedBody(request.body)
        ? await readWhole(request.body.open())
        : joined(request.body);
      // Reading a streamed body takes time: the caller may have given up meanwhile.
      if (isAborted(caller)) {
        throw new WireError('aborted', `${what}: aborted`, { cause: caller?.reason, unsent: true });
      }
      try {
        const response = await fetchFn(url, {
          method: request.method,
          headers: { ...request.headers },
          ...(body === undefined ? {} : { body }),
          ...(signals.length === 0 ? {} : { signal: AbortSignal.any(signals) }),
        });
        const retryAfter = response.headers.get('retry-after');
        return {
          status: response.status,
          statusText: response.statusText,
          ...(retryAfter === null ? {} : { retryAfter }),
          body: await readCapped(
            response,
            request.maxResponseBytes ?? Number.POSITIVE_INFINITY,
            what,
          ),
        };
      } catch (cause) {
        if (cause instanceof WireError) throw cause;
        // Read again: the signal may have fired while the request was out.
        if (isAborted(caller)) {
          throw new WireError('aborted', `${what}: aborted`, { cause: caller?.reason });
        }
        if (timeout?.aborted === true) {
          throw new WireError('timeout', `${what}: no answer within ${request.timeoutMs} ms`, {
            cause,
          });
        }
        throw new WireError('network', `${what}: ${(cause as Error).message}`, { cause });
      }
    },
    close: async () => {},
  };
}
