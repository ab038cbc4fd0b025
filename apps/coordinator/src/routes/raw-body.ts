import { FlowfleetError } from '@flowfleet/errors';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** Accepts `application/octet-stream` bodies as the raw request stream (no buffering). */
export function registerOctetStream(app: FastifyInstance): void {
  app.addContentTypeParser('application/octet-stream', (_request, payload, done) => {
    done(null, payload);
  });
}

function tooLarge(maxBytes: number, sizeBytes?: number): FlowfleetError {
  return new FlowfleetError('API_BLOB_TOO_LARGE', `upload exceeds the limit of ${maxBytes} bytes`, {
    details: { maxBytes, ...(sizeBytes !== undefined ? { sizeBytes } : {}) },
  });
}

/**
 * The request body as a byte stream, refusing up front when Content-Length already exceeds
 * `maxBytes` (the store enforces the limit again while streaming, for chunked uploads).
 * @throws FlowfleetError `API_BLOB_TOO_LARGE`
 */
export function rawBodyStream(
  request: FastifyRequest,
  maxBytes: number,
): AsyncIterable<Uint8Array> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes, declared);
  const body = request.body as AsyncIterable<Uint8Array> | undefined;
  if (body === undefined || body === null) return (async function* () {})();
  return body;
}

/**
 * The whole request body in memory (for small bodies such as a summary).
 * @throws FlowfleetError `API_BLOB_TOO_LARGE` past `maxBytes`
 */
export async function collectBody(request: FastifyRequest, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let sizeBytes = 0;
  for await (const chunk of rawBodyStream(request, maxBytes)) {
    sizeBytes += chunk.byteLength;
    if (sizeBytes > maxBytes) throw tooLarge(maxBytes);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}
