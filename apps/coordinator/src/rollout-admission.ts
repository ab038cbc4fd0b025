import type { CardRegistry } from '@flowfleet/models';
import type { rolloutRequestSchema } from '@flowfleet/protocol';
import { parseOrThrow, type ModelCapabilities, type RolloutRequest } from '@flowfleet/protocol';

/** A request the edge accepts, with what its model card says it needs from a worker. */
export interface AdmittedRollout {
  readonly request: RolloutRequest;
  readonly capabilities: ModelCapabilities;
}

/**
 * The model card's own request rules on a request that passed the schema (the `resolveRequest`
 * the worker's runtime runs before the rollout), which also derive the ops and component kinds of
 * the lane. `POST /v1/rollouts` runs it after fastify validated the body. Pure: no I/O.
 * @throws FlowfleetError MODEL_UNKNOWN_CARD, MODEL_INVALID_REQUEST (the card's rules)
 */
export function admitParsedRolloutRequest(
  request: RolloutRequest,
  cards: CardRegistry,
): AdmittedRollout {
  return { request, capabilities: cards.capabilities(request.model, request) };
}

/**
 * Everything `POST /v1/rollouts` checks, in its order: the request schema under the fleet's
 * limits, then the card's rules (`admitParsedRolloutRequest`). Pure: no I/O.
 * @throws FlowfleetError PROTO_INVALID_REQUEST (schema, limits), MODEL_UNKNOWN_CARD,
 *   MODEL_INVALID_REQUEST (the card's rules)
 */
export function admitRolloutRequest(
  body: unknown,
  schema: ReturnType<typeof rolloutRequestSchema>,
  cards: CardRegistry,
): AdmittedRollout {
  const request = parseOrThrow(schema, body, 'PROTO_INVALID_REQUEST', 'rollout request');
  return admitParsedRolloutRequest(request, cards);
}
