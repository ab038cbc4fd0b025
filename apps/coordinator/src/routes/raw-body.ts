import { FlowfleetError } from '@flowfleet/errors';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * Makes the (plugin-scoped) `app` take `application/octet-stream` bodies only, as the raw request
 * stream (no buffering): any other Content-Type, JSON included, is refused with 415
 * `API_UNSUPPORTED_MEDIA_TYPE` before a byte is read.
 */
export function registerOctetStream(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/octet-stream', (_request, payload, done) => {
    done(null, payload);
  });
}

function unsupportedMediaType(contentType: string | undefined): FlowfleetError {
  return new FlowfleetError(
    'API_UNSUPPORTED_MEDIA_TYPE',
    'uploads take Content-Type: application/octet-stream',
    { details: { contentType: contentType ?? null, accepted: ['application/octet-stream'] } },
  );
}

function tooLarge(maxBytes: number, sizeBytes?: number): FlowfleetError {
  return new FlowfleetError('API_BLOB_TOO_LARGE', `upload exceeds the limit of ${maxBytes} bytes`, {
    details: { maxBytes, ...(sizeBytes !== undefined ? { sizeBytes } : {}) },
  });
}

/**
 * The request body as a byte stream, refusing up front when Content-Length already exceeds
 * `maxBytes` (the store enforces the limit again while streaming, for chunked uploads).
 * @throws FlowfleetError `API_BLOB_TOO_LARGE`, `API_UNSUPPORTED_MEDIA_TYPE` (a request without
 *   Content-Type: fastify hands such a bodiless request on without parsing)
 */
export function rawBodyStream(
  request: FastifyRequest,
  maxBytes: number,
): AsyncIterable<Uint8Array> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes, declared);
  const body = request.body as AsyncIterable<Uint8Array> | undefined;
  if (body === undefined || body === null)
    throw unsupportedMediaType(request.headers['content-type']);
  return body;
}

/**
 * Reads the first `headBytes` of a body into memory and hands back the rest as a stream (for an
 * upload that carries a small JSON part ahead of a large binary one).
 * @throws FlowfleetError `API_INVALID_BODY` when the body ends before `headBytes`
 */
export async function splitBody(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  headBytes: number,
): Promise<{ head: Buffer; rest: AsyncIterable<Uint8Array> }> {
  const iterator =
    Symbol.asyncIterator in source
      ? source[Symbol.asyncIterator]()
      : (source as Iterable<Uint8Array>)[Symbol.iterator]();
  const parts: Uint8Array[] = [];
  let size = 0;
  let carry: Uint8Array | undefined;
  while (size < headBytes) {
    const next = await iterator.next();
    if (next.done === true) {
      throw new FlowfleetError(
        'API_INVALID_BODY',
        `the body ended after ${size} bytes, inside its ${headBytes}-byte first part`,
        { details: { issues: [{ path: [], message: `expected at least ${headBytes} bytes` }] } },
      );
    }
    const chunk = next.value;
    const needed = headBytes - size;
    if (chunk.byteLength > needed) {
      parts.push(chunk.subarray(0, needed));
      carry = chunk.subarray(needed);
      size = headBytes;
    } else {
      parts.push(chunk);
      size += chunk.byteLength;
    }
  }
  const rest = (async function* () {
    if (carry !== undefined) yield carry;
    for (;;) {
      const next = await iterator.next();
      if (next.done === true) return;
      yield next.value;
    }
  })();
  return { head: Buffer.concat(parts, headBytes), rest };
}
