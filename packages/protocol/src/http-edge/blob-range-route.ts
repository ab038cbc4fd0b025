import { Readable } from 'node:stream';
import { FlowfleetError } from '@flowfleet/errors';
import type { FastifyInstance, RouteShorthandOptions } from 'fastify';
import { Sha256Schema } from '../atoms.js';
import { throttled, type EgressBucket } from '../egress-bucket.js';

/** A byte range `[start, end]` (inclusive, as HTTP ranges are) inside a blob. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/** What a server holds of a blob (or of one range of it). */
export interface OpenedBytes {
  /** Bytes the body gives (the range's length when one was asked for). */
  readonly sizeBytes: number;
  /** The whole blob's size, when the server knows it (a peer holds ranges: `*`). */
  readonly totalBytes?: number;
  readonly body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
}

/** What the route serves from, and how. */
export interface BlobRangeRouteOptions {
  /**
   * The bytes of blob `sha256` — all of it, or `range` — or undefined when they are not here.
   * `signal` aborts when the asker hangs up or the server closes (a wait for bytes ends).
   * @throws FlowfleetError API_RANGE_NOT_SATISFIABLE for a range outside the blob
   */
  open(
    sha256: string,
    range: ByteRange | undefined,
    signal: AbortSignal,
  ): Promise<OpenedBytes | undefined>;
  /** The error of a blob (or range) that is not here. */
  notFound(sha256: string, range: ByteRange | undefined): FlowfleetError;
  /** Whether a request without `Range` gets the whole blob (the coordinator) or is refused (a peer). */
  readonly wholeBlobs: boolean;
  /** Every body pays into it (the server's egress cap); none: sent as fast as the link goes. */
  readonly egress?: EgressBucket | undefined;
  /** The app's own route options: its schema (for validation and docs) and config (roles). */
  readonly route?: Pick<RouteShorthandOptions, 'schema' | 'config'>;
  /** Aborts every response in flight (the server is closing). */
  readonly signal?: AbortSignal;
}

/** The path of the blob route, on the coordinator and on every peer server. */
export const BLOB_ROUTE = '/v1/blobs/:sha256';

/**
 * The one `bytes=first-last` range of a Range header (both positions given, inclusive);
 * multi-range, open-ended and suffix forms are refused.
 * @throws FlowfleetError API_RANGE_NOT_SATISFIABLE
 */
export function parseRange(header: string): ByteRange {
  const match = /^bytes=(\d{1,15})-(\d{1,15})$/.exec(header.trim());
  const start = Number(match?.[1]);
  const end = Number(match?.[2]);
  if (match === null || end < start) {
    throw new FlowfleetError(
      'API_RANGE_NOT_SATISFIABLE',
      `Range ${JSON.stringify(header.slice(0, 200))} is not one bytes=first-last range`,
      { details: { range: header.slice(0, 200) } },
    );
  }
  return { start, end };
}

/**
 * Registers `GET /v1/blobs/:sha256` — the one implementation of the blob route, served by the
 * coordinator (from its store, whole or one range) and by each worker's peer server (from the
 * ranges it verified, ranges only; ADR 009): the sha256 is checked, one `Range: bytes=first-last`
 * is answered 206 with `Content-Range`, a blob that is not here is the server's coded 404, and the
 * body pays into the server's egress cap. Errors are thrown: the app's error handler answers them
 * in the envelope `{code, message, details}`. Auth is the app's (its onRequest hook).
 * @throws FlowfleetError (answered) API_INVALID_PARAMS, API_RANGE_NOT_SATISFIABLE, the notFound code
 */
export function registerBlobRangeRoute(app: FastifyInstance, options: BlobRangeRouteOptions): void {
  app.get(BLOB_ROUTE, { ...options.route }, async (request, reply) => {
    const { sha256 } = request.params as { sha256?: unknown };
    if (typeof sha256 !== 'string' || !Sha256Schema.safeParse(sha256).success) {
      throw new FlowfleetError('API_INVALID_PARAMS', 'the blob is named by its sha256', {
        details: { param: 'sha256' },
      });
    }
    const header = request.headers.range;
    const range = header === undefined ? undefined : parseRange(header);
    if (range === undefined && !options.wholeBlobs) {
      throw new FlowfleetError(
        'API_RANGE_NOT_SATISFIABLE',
        'this server serves byte ranges only: send one Range: bytes=first-last',
        { details: { range: null } },
      );
    }
    const closed = new AbortController();
    const abort = (): void => closed.abort();
    options.signal?.addEventListener('abort', abort, { once: true });
    reply.raw.once('close', () => {
      options.signal?.removeEventListener('abort', abort);
      abort();
    });
    if (options.signal?.aborted === true) abort();
    const opened = await options.open(sha256, range, closed.signal);
    if (opened === undefined) throw options.notFound(sha256, range);
    void reply
      .header('content-type', 'application/octet-stream')
      .header('accept-ranges', 'bytes')
      .header('content-length', opened.sizeBytes);
    if (range !== undefined) {
      void reply
        .status(206)
        .header('content-range', `bytes ${range.start}-${range.end}/${opened.totalBytes ?? '*'}`);
    }
    const { body } = opened;
    if (request.method === 'HEAD') {
      // The GET's headers, no body: nothing is read (fastify would drain a stream for HEAD).
      if (body instanceof Readable) body.destroy();
      return reply.send(Readable.from([]));
    }
    // Under an egress cap every body pays into the one bucket (a link's bandwidth).
    if (options.egress === undefined && body instanceof Readable) return reply.send(body);
    return reply.send(
      Readable.from(throttled(body, options.egress, closed.signal), { objectMode: false }),
    );
  });
}
