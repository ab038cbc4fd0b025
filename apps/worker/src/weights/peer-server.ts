import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import { hostname } from 'node:os';
import { FlowfleetError } from '@flowfleet/errors';
import { errorEnvelopeOf, throttled, type EgressBucket } from '@flowfleet/protocol';
import type { Logger } from 'pino';
import type { VerifiedRanges } from './verified-ranges.js';

/** How a peer server listens and what it serves. */
export interface PeerServerOptions {
  /** Address to bind (FLOWFLEET_PEER_HOST, default 0.0.0.0). */
  readonly host: string;
  /** Port (FLOWFLEET_PEER_PORT; 0: an ephemeral one). */
  readonly port: number;
  /** What peers dial (FLOWFLEET_PEER_ADVERTISE_URL); default `http://<host>:<bound port>`. */
  readonly advertiseUrl?: string | undefined;
  /** The fleet's worker-role token, required as `Authorization: Bearer` when set. */
  readonly token?: string | undefined;
  readonly ranges: VerifiedRanges;
  /** The worker's egress cap (FLOWFLEET_EGRESS_BYTES_PER_S), shared by every response. */
  readonly egress?: EgressBucket | undefined;
  /** The longest a request waits for a range a load here is fetching (default 30 s). */
  readonly maxWaitMs?: number;
  /** With no load in progress, how long a request waits for one to start (default 3 s). */
  readonly idleGraceMs?: number;
  readonly logger: Logger;
}

const SHA256_PATH = /^\/v1\/blobs\/([0-9a-f]{64})$/;
const RANGE = /^bytes=(\d{1,15})-(\d{1,15})$/;

function fail(response: ServerResponse, error: FlowfleetError): void {
  const { status, body } = errorEnvelopeOf(error);
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The worker's peer server (ADR 009): `GET /v1/blobs/:sha256` with one `Range: bytes=first-last`,
 * answered 206 from the verified ranges it holds — the coordinator's blob route's shape, so a peer
 * is fetched with the same SDK client. A range a load here is fetching is answered once verified
 * (a pipelined chain); anything else is a coded 404 at once and the asker falls back. Read-only,
 * token-checked, every body paid into the worker's egress cap.
 */
export class PeerServer {
  readonly url: string;
  readonly #server: Server;
  readonly #abort: AbortController;
  #closing: Promise<void> | undefined;

  private constructor(server: Server, url: string, abort: AbortController) {
    this.#server = server;
    this.url = url;
    this.#abort = abort;
  }

  /** Listens and resolves once bound. @throws the listen error (EADDRINUSE, …) */
  static async start(options: PeerServerOptions): Promise<PeerServer> {
    const abort = new AbortController();
    const server = createServer((request, response) => {
      handle(options, abort.signal, request, response).catch((error: unknown) => {
        options.logger.error({ err: error }, 'peer request failed');
        if (!response.headersSent) fail(response, error as FlowfleetError);
        else response.destroy();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { port } = server.address() as AddressInfo;
    const wildcard = options.host === '0.0.0.0' || options.host === '::';
    const url = options.advertiseUrl ?? `http://${wildcard ? hostname() : options.host}:${port}`;
    return new PeerServer(server, url.replace(/\/+$/, ''), abort);
  }

  /** Stops listening, ends waits in flight and drops open connections. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      this.#abort.abort();
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
    return this.#closing;
  }
}

async function handle(
  options: PeerServerOptions,
  signal: AbortSignal,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  if (options.token !== undefined) {
    const header = request.headers.authorization ?? '';
    const given = header.startsWith('Bearer ') ? header.slice(7) : '';
    if (!sameToken(given, options.token)) {
      fail(response, new FlowfleetError('WORKER_PEER_UNAUTHORIZED', 'a worker token is required'));
      return;
    }
  }
  const path = SHA256_PATH.exec(request.url ?? '');
  const range = RANGE.exec(String(request.headers.range ?? '').trim());
  if (request.method !== 'GET' || path === null || range === null) {
    fail(
      response,
      new FlowfleetError(
        'WORKER_PEER_BAD_REQUEST',
        'a peer serves GET /v1/blobs/<sha256> with one Range: bytes=first-last',
        { details: { method: request.method, url: request.url?.slice(0, 200) } },
      ),
    );
    return;
  }
  const sha256 = path[1]!;
  const begin = Number(range[1]);
  const end = Number(range[2]) + 1;
  const closed = new AbortController();
  const abort = (): void => closed.abort();
  signal.addEventListener('abort', abort, { once: true });
  response.once('close', () => {
    signal.removeEventListener('abort', abort);
    closed.abort();
  });
  const pieces =
    end > begin
      ? await options.ranges.waitFor(
          { sha256, begin, end },
          {
            maxWaitMs: options.maxWaitMs ?? 30_000,
            idleGraceMs: options.idleGraceMs ?? 3_000,
            signal: closed.signal,
          },
        )
      : undefined;
  if (closed.signal.aborted) return;
  if (pieces === undefined) {
    fail(
      response,
      new FlowfleetError(
        'WORKER_PEER_RANGE_UNAVAILABLE',
        `this peer holds no verified bytes ${begin}-${end - 1} of ${sha256}`,
        { details: { sha256, begin, end } },
      ),
    );
    return;
  }
  response.writeHead(206, {
    'content-type': 'application/octet-stream',
    'content-length': end - begin,
    'content-range': `bytes ${begin}-${end - 1}/*`,
  });
  try {
    for await (const part of throttled(pieces, options.egress, closed.signal)) {
      if (closed.signal.aborted) return;
      if (!response.write(part)) {
        await new Promise<void>((resolve) => {
          const go = (): void => {
            response.off('drain', go);
            response.off('close', go);
            resolve();
          };
          response.once('drain', go);
          response.once('close', go);
        });
      }
    }
  } catch (error) {
    // The asker hung up (or the server closed) while the body waited on the cap.
    if (closed.signal.aborted) return;
    throw error;
  }
  response.end();
}
