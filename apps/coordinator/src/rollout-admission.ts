import { FlowfleetError } from '@flowfleet/errors';
import { returnedFrameBytes, type CardRegistry } from '@flowfleet/models';
import {
  parseOrThrow,
  rolloutRequestSchema,
  type Limits,
  type ModelCapabilities,
  type RolloutDefaultsFor,
  type RolloutRequest,
} from '@flowfleet/protocol';

/** A request the edge accepts, with what its model card says it needs from a worker. */
export interface AdmittedRollout {
  readonly request: RolloutRequest;
  readonly capabilities: ModelCapabilities;
}

/** The sampling defaults of each model, from its card: what a request that leaves them out runs. */
export function cardDefaults(cards: CardRegistry): RolloutDefaultsFor {
  return (model) => {
    if (!cards.has(model)) return undefined;
    const { sampling, latent } = cards.get(model);
    return {
      steps: sampling.steps,
      sampler: sampling.sampler,
      guidanceScale: sampling.guidanceScale,
      noiseLevel: sampling.noiseLevel,
      shift: sampling.shift,
      shape: { frames: latent.frames, height: latent.height, width: latent.width },
    };
  };
}

/**
 * The `POST /v1/rollouts` body schema: the request schema under the fleet's limits, with the
 * sampling fields a request leaves out filled from its model card.
 */
export function admissionSchema(limits: Limits, cards: CardRegistry) {
  return rolloutRequestSchema(limits, cardDefaults(cards));
}

/**
 * The model card's own request rules on a request that passed the schema (the `resolveRequest`
 * the worker's runtime runs before the rollout), which also derive the ops and component kinds of
 * the lane; then the size of the frames it asks for against the result store's `maxBlobBytes`. `POST /v1/rollouts` runs it after fastify validated the body. Pure: no I/O.
 * @throws FlowfleetError MODEL_UNKNOWN_CARD, MODEL_INVALID_REQUEST (the card's rules),
 *   PROTO_INVALID_REQUEST (frames past maxBlobBytes)
 */
export function admitParsedRolloutRequest(
  request: RolloutRequest,
  cards: CardRegistry,
  limits: Limits,
): AdmittedRollout {
  const capabilities = cards.capabilities(request.model, request);
  checkFrameBytes(request, cards, limits);
  return { request, capabilities };
}

/**
 * The decoded frames a request asks for go into its result, which the blob store caps at
 * `maxBlobBytes`: a request whose frames alone exceed it could never be stored, so it is refused
 * here, before a worker decodes them.
 * @throws FlowfleetError PROTO_INVALID_REQUEST (path `decodeFrames`)
 */
function checkFrameBytes(request: RolloutRequest, cards: CardRegistry, limits: Limits): void {
  const decoder = cards.get(request.model).frameDecoder;
  if (decoder === undefined || request.decodeFrames === 'none') return;
  const clip = decoder.clip(request.shape);
  const bytes = returnedFrameBytes(clip, request.decodeFrames, request.seeds.length);
  if (bytes > limits.maxBlobBytes) {
    const message = `the frames asked for are ${bytes} bytes (${request.seeds.length} samples of a ${clip.frames}×${clip.height}×${clip.width} clip); a result may hold at most ${limits.maxBlobBytes} (maxBlobBytes): ask for fewer frames or samples`;
    throw new FlowfleetError('PROTO_INVALID_REQUEST', `rollout request: ${message}`, {
      details: { issues: [{ path: ['decodeFrames'], message }] },
    });
  }
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
  limits: Limits,
): AdmittedRollout {
  const request = parseOrThrow(schema, body, 'PROTO_INVALID_REQUEST', 'rollout request');
  return admitParsedRolloutRequest(request, cards, limits);
}
