import { FlowfleetError } from '@flowfleet/errors';
import {
  resolvedRequestFields,
  returnedFrameBytes,
  type CardRegistry,
  type ModelCard,
} from '@flowfleet/models';
import {
  latentLimitIssue,
  parseOrThrow,
  rolloutRequestSchema,
  type Limits,
  type ModelCapabilities,
  type RolloutRequest,
} from '@flowfleet/protocol';

/**
 * A request the edge accepts: the card's resolved request (every sampling default stated) — what
 * the job stores and the worker runs — with what its card says it needs from a worker.
 */
export interface AdmittedRollout {
  readonly request: RolloutRequest;
  readonly capabilities: ModelCapabilities;
  /** The request's card (its text-embedding spec tells the edge what to check of the blobs). */
  readonly card: ModelCard;
}

/** The `POST /v1/rollouts` body schema: the wire schema under the fleet's limits. */
export function admissionSchema(limits: Limits) {
  return rolloutRequestSchema(limits);
}

/**
 * The model card's request rules on a request that passed the schema: the card fills every
 * sampling default and checks every sampling rule (the same `resolveRequest` the worker's runtime
 * runs), and the result replaces the sampling fields of the request, so what is stored is what
 * runs. Then the fleet's latent limit on the resolved shape (the card may have filled it), and
 * the frames it asks for against the result store's `maxBlobBytes`. Pure.
 * @throws FlowfleetError MODEL_UNKNOWN_CARD, MODEL_INVALID_REQUEST (the card's rules),
 *   PROTO_INVALID_REQUEST (the group's latent over `limits.maxLatentElements`, frames over
 *   `limits.maxBlobBytes`)
 */
export function admitParsedRolloutRequest(
  request: RolloutRequest,
  cards: CardRegistry,
  limits: Pick<Limits, 'maxLatentElements' | 'maxBlobBytes'>,
): AdmittedRollout {
  const card = cards.get(request.model);
  const resolved = card.resolveRequest(request);
  const { seeds, sigmas, ...fields } = resolvedRequestFields(resolved);
  const stored: RolloutRequest = {
    model: request.model,
    ...fields,
    seeds: [...seeds],
    ...(sigmas === undefined ? {} : { sigmas: [...sigmas] }),
    weights: request.weights,
    constraints: request.constraints,
    waitForCapacity: request.waitForCapacity,
  };
  const issue = latentLimitIssue(seeds.length, stored.shape, limits);
  if (issue !== undefined) {
    throw new FlowfleetError('PROTO_INVALID_REQUEST', `rollout request: ${issue}`, {
      details: { issues: [{ path: ['shape'], message: issue }] },
    });
  }
  checkFrameBytes(card, resolved, limits);
  return {
    request: stored,
    capabilities: { ops: [...card.requiredOps(resolved)], componentKinds: componentKinds(card) },
    card,
  };
}

/**
 * The decoded frames a request asks for go into its result, which the blob store caps at
 * `maxBlobBytes`: a request whose frames alone exceed it could never be stored, so it is refused
 * here, before a worker decodes them.
 * @throws FlowfleetError PROTO_INVALID_REQUEST (path `decodeFrames`)
 */
function checkFrameBytes(
  card: ModelCard,
  resolved: ReturnType<ModelCard['resolveRequest']>,
  limits: Pick<Limits, 'maxBlobBytes'>,
): void {
  const decoder = card.frameDecoder;
  if (decoder === undefined || resolved.decodeFrames === 'none') return;
  const clip = decoder.clip(resolved.shape);
  const group = resolved.seeds.length;
  const bytes = returnedFrameBytes(clip, resolved.decodeFrames, group);
  if (bytes > limits.maxBlobBytes) {
    const message = `the frames asked for are ${bytes} bytes (${group} samples of a ${clip.frames}×${clip.height}×${clip.width} clip); a result may hold at most ${limits.maxBlobBytes} (maxBlobBytes): ask for fewer frames or samples`;
    throw new FlowfleetError('PROTO_INVALID_REQUEST', `rollout request: ${message}`, {
      details: { issues: [{ path: ['decodeFrames'], message }] },
    });
  }
}

function componentKinds(card: ModelCard): string[] {
  return [...new Set(card.components.map((component) => component.kind))];
}

/**
 * Everything `POST /v1/rollouts` checks before its I/O, in its order: the request schema under
 * the fleet's limits, then the card's rules (`admitParsedRolloutRequest`). Pure: no I/O.
 * @throws FlowfleetError PROTO_INVALID_REQUEST (schema, limits), MODEL_UNKNOWN_CARD,
 *   MODEL_INVALID_REQUEST (the card's rules)
 */
export function admitRolloutRequest(
  body: unknown,
  schema: ReturnType<typeof rolloutRequestSchema>,
  cards: CardRegistry,
  limits: Pick<Limits, 'maxLatentElements' | 'maxBlobBytes'>,
): AdmittedRollout {
  const request = parseOrThrow(schema, body, 'PROTO_INVALID_REQUEST', 'rollout request');
  return admitParsedRolloutRequest(request, cards, limits);
}
