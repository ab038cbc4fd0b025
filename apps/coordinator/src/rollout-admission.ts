import type { CardRegistry } from '@flowfleet/models';
import type { rolloutRequestSchema } from '@flowfleet/protocol';
import { parseOrThrow, type ModelCapabilities, type RolloutRequest } from '@flowfleet/protocol';

/** A request the edge accepts, with what its model card says it needs from a worker. */
export interface AdmittedRollout {
  readonly request: RolloutRequest;
  readonly capabilities: ModelCapabilities;
}

/**
 * What `POST /v1/rollouts` accepts: the request schema under the fleet's limits, then the model
 * card's own request rules (the `resolveRequest` the worker's runtime runs before the rollout),
 * which also derive the ops and component kinds of the lane. Pure: no I/O.
 * @throws FlowfleetError PROTO_INVALID_REQUEST (schema, limits), MODEL_UNKNOWN_CARD,
 *   MODEL_INVALID_REQUEST (the card's rules)
 */
export function admitRolloutRequest(
  body: unknown,
  schema: ReturnType<typeof rolloutRequestSchema>,
  cards: CardRegistry,
): AdmittedRollout {
  const request = parseOrThrow(schema, body, 'PROTO_INVALID_REQUEST', 'rollout request');
  return { request, capabilities: cards.capabilities(request.model, request) };
}
