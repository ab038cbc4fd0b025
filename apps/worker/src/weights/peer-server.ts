import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { FlowfleetError } from '@flowfleet/errors';
import type { EgressBucket } from '@flowfleet/protocol';
import {
  BearerAuth,
  edgeServerOptions,
  installErrorEnvelope,
  refuseMissingHost,
  registerBlobRangeRoute,
} from '@flowfleet/protocol/http-edge';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { VerifiedRanges } from './verified-ranges.js';

/** How a peer server listens and what it serves. */
export interface PeerServerOptions {
  /** Address to bind (FLOWFLEET_PEER_HOST; the worker process picks it, see `peerBindHost`). */
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

/**
 * The worker's peer server (ADR 009, ADR 012): the coordinator's blob route — the same
 * implementation (protocol's `registerBlobRangeRoute`), auth check (`BearerAuth`, the worker
 * role) and error envelope — serving ranges only, from the verified ranges this worker holds. A
 * range a load here is fetching is answered once verified (a pipelined chain); anything else is
 * a coded 404 at once and the asker falls back. Read-only, every body paid into the worker's
 * egress cap.
 */
export class PeerServer {
  readonly url: string;
  readonly #app: FastifyInstance;
  readonly #abort: AbortController;
  #closing: Promise<void> | undefined;

  private constructor(app: FastifyInstance, url: string, abort: AbortController) {
    this.#app = app;
    this.url = url;
    this.#abort = abort;
  }

  /** Listens and resolves once bound. @throws the listen error (EADDRINUSE, …) */
  static async start(options: PeerServerOptions): Promise<PeerServer> {
    const abort = new AbortController();
    const app = Fastify({
      loggerInstance: options.logger as FastifyBaseLogger,
      // Peers ask many ranges a second: no request lines (failures are logged by the handler).
      logController: new LogController({ disableRequestLogging: true }),
      ...edgeServerOptions(),
      exposeHeadRoutes: false,
      // close() ends the waits in flight and drops open connections (peers fall back).
      forceCloseConnections: true,
    });
    installErrorEnvelope(app);
    refuseMissingHost(app);
    const auth = new BearerAuth(
      options.token === undefined ? undefined : { worker: options.token },
    );
    app.addHook('onRequest', async (request) => {
      auth.authorize(request.headers.authorization, ['worker']);
    });
    registerBlobRangeRoute(app, {
      wholeBlobs: false,
      egress: options.egress,
      signal: abort.signal,
      open: async (sha256, range, signal) => {
        // The route refuses a request without a range (wholeBlobs: false).
        const { start, end } = range!;
        const pieces = await options.ranges.waitFor(
          { sha256, begin: start, end: end + 1 },
          {
            maxWaitMs: options.maxWaitMs ?? 30_000,
            idleGraceMs: options.idleGraceMs ?? 3_000,
            signal,
          },
        );
        return pieces === undefined ? undefined : { sizeBytes: end - start + 1, body: pieces };
      },
      notFound: (sha256, range) =>
        new FlowfleetError(
          'WORKER_PEER_RANGE_UNAVAILABLE',
          `this peer holds no verified bytes ${range?.start}-${range?.end} of ${sha256}`,
          { details: { sha256, begin: range?.start, end: (range?.end ?? 0) + 1 } },
        ),
    });
    try {
      await app.listen({ port: options.port, host: options.host });
    } catch (error) {
      await app.close();
      throw error;
    }
    const { port } = app.server.address() as AddressInfo;
    const wildcard = options.host === '0.0.0.0' || options.host === '::';
    const host = wildcard
      ? hostname()
      : options.host.includes(':')
        ? `[${options.host}]`
        : options.host;
    const url = options.advertiseUrl ?? `http://${host}:${port}`;
    return new PeerServer(app, url.replace(/\/+$/, ''), abort);
  }

  /** Stops listening, ends waits in flight and drops open connections. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#abort.abort();
      await this.#app.close();
    })();
    return this.#closing;
  }
}
