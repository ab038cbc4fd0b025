import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import { isFlowfleetError } from '@flowfleet/errors';
import { errorEnvelopeOf } from '@flowfleet/protocol';
import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  RouteOptions,
} from 'fastify';
import type { RouteDoc } from '../route-table.js';
import type { CoordinatorServices } from '../services.js';
import { QUEUES_PATH, queryToken, queuesCookie, withoutToken } from './browser-token.js';

/** Lanes are re-read from Redis at most this often while someone uses the board. */
const LANE_REFRESH_MS = 1_000;
const READ_METHODS: readonly string[] = ['GET', 'HEAD'];

function isUnderQueues(url: string): boolean {
  return url === QUEUES_PATH || url.startsWith(`${QUEUES_PATH}/`);
}

/** Auth failures on board routes answer the API's error envelope; anything else is bull-board's. */
function boardErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (!isFlowfleetError(error)) throw error;
  const { status, body } = errorEnvelopeOf(error);
  request.log.info({ code: body.code }, 'request rejected');
  return reply.status(status).send(body);
}

/** `/queues?token=…`: keep the token in an HttpOnly cookie and drop it from the address bar. */
async function tokenToCookie(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const token = queryToken(request.query);
  if (token === undefined) return;
  void reply.header('set-cookie', queuesCookie(token, request.protocol === 'https'));
  if (request.method === 'GET') await reply.redirect(withoutToken(request.url), 303);
}

/**
 * An `onRoute` hook, installed before the route table collects routes: bull-board registers its
 * own routes, so each one under `/queues` gets its doc here — viewer for reads, trainer for
 * writes (the board is read-only anyway), the token from `?token=` or the session cookie, kept
 * out of the API's route table — plus the cookie hook and the error handler above.
 */
export function docQueueBoardRoutes(options: RouteOptions): void {
  if (options.config?.flowfleet !== undefined || !isUnderQueues(options.url)) return;
  const methods = Array.isArray(options.method) ? options.method : [options.method];
  const reads = methods.every((method) => READ_METHODS.includes(method));
  const doc: RouteDoc = {
    roles: reads ? ['viewer'] : ['trainer'],
    summary: 'bull-board (read-only) over every lane queue',
    produces: { status: 200, body: 'html' },
    browserToken: 'query-or-cookie',
    listed: false,
  };
  // Mutate in place: fastify registers `/queues` and `/queues/` from this same options object.
  options.config = { ...options.config, flowfleet: doc };
  const own = options.onRequest;
  options.onRequest = [
    ...(own === undefined ? [] : Array.isArray(own) ? own : [own]),
    tokenToCookie,
  ];
  options.errorHandler = boardErrorHandler;
}

/**
 * Mounts bull-board at `/queues`, read-only, showing every lane queue. Lanes are read from Redis
 * (at most once a second) on requests to the board, so a lane recorded by any coordinator shows
 * up on the next page load or poll.
 */
export function registerQueueBoard(app: FastifyInstance, services: CoordinatorServices): void {
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(QUEUES_PATH);
  const board = createBullBoard({
    queues: [],
    serverAdapter,
    options: { uiConfig: { boardTitle: 'flowfleet lanes' } },
  });
  const shown = new Set<string>();
  let readAt = 0;
  let reading: Promise<void> | undefined;
  const showNewLanes = async (): Promise<void> => {
    for (const { lane } of await services.lanes.list()) {
      if (shown.has(lane)) continue;
      shown.add(lane);
      board.addQueue(new BullMQAdapter(services.queues.get(lane), { readOnlyMode: true }));
    }
  };
  const refresh = (): Promise<void> => {
    if (reading === undefined && Date.now() - readAt >= LANE_REFRESH_MS) {
      readAt = Date.now();
      reading = showNewLanes().finally(() => {
        reading = undefined;
      });
    }
    return reading ?? Promise.resolve();
  };

  void app.register(async (scope) => {
    // Runs after the root auth hook: only authorised requests touch Redis.
    scope.addHook('onRequest', refresh);
    await scope.register(serverAdapter.registerPlugin(), { prefix: QUEUES_PATH });
  });
}
