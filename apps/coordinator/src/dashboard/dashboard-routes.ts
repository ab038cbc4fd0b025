import { randomBytes } from 'node:crypto';
import { isFlowfleetError } from '@flowfleet/errors';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CoordinatorServices } from '../services.js';
import { queryToken, queuesCookie } from './browser-token.js';
import { dashboardCsp, renderDashboardPage, type PageAuth } from './dashboard-page.js';
import { registerQueueBoard } from './queue-board.js';
import { registerRolloutFrameRoute } from './rollout-frame-route.js';
import { registerRolloutListRoute } from './rollout-list-route.js';

function sendPage(
  reply: FastifyReply,
  status: number,
  auth: PageAuth,
  components: readonly string[] = [],
): FastifyReply {
  const nonce = randomBytes(16).toString('base64');
  return reply
    .status(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', dashboardCsp(nonce))
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    .send(renderDashboardPage(auth, nonce, components));
}

/** Without a valid token, `/` answers 401 (or 403) with the page in its token-form state. */
function pageErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (!isFlowfleetError(error)) throw error;
  if (error.code === 'API_UNAUTHORIZED') {
    request.log.info({ code: error.code }, 'request rejected');
    const presented =
      queryToken(request.query) !== undefined || request.headers.authorization !== undefined;
    return sendPage(reply, 401, presented ? 'rejected' : 'missing');
  }
  if (error.code === 'API_FORBIDDEN') {
    request.log.info({ code: error.code }, 'request rejected');
    return sendPage(reply, 403, 'forbidden');
  }
  throw error;
}

/**
 * The dashboard: `GET /` (the page), `GET /v1/rollouts` (recent rollouts, which the page lists),
 * `GET /v1/rollouts/:id/frames/:sample/:frame` (a returned frame as a PNG, the page's
 * thumbnails) and bull-board at `/queues`.
 */
export function registerDashboard(app: FastifyInstance, services: CoordinatorServices): void {
  app.get('/', {
    config: {
      flowfleet: {
        roles: ['viewer'],
        summary:
          'The dashboard page (HTML): capability matrix, workers, lanes, weight versions, recent rollouts; without a valid token, the token form (401)',
        produces: { status: 200, body: 'html' },
        browserToken: 'query',
      },
    },
    errorHandler: pageErrorHandler,
    handler: async (request, reply) => {
      // A valid ?token= also opens /queues: bull-board cannot send a bearer header.
      const token = queryToken(request.query);
      if (token !== undefined) {
        void reply.header('set-cookie', queuesCookie(token, request.protocol === 'https'));
      }
      // The cards' components, so their weights show before any worker reports them.
      const components = services.cards.cards.flatMap((card) => card.components.map((c) => c.id));
      return sendPage(reply, 200, 'ok', [...new Set(components)].sort());
    },
  });
  registerRolloutListRoute(app, services);
  registerRolloutFrameRoute(app, services);
  registerQueueBoard(app, services);
}
