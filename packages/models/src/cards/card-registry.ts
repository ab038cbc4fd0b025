import { FlowfleetError } from '@flowfleet/errors';
import type { SamplingRequest } from '../sampling/sampling-request.js';
import type { CardCapabilities, ModelCard } from './model-card.js';
import * as SHIPPED_FAMILIES from './shipped-families.js';

/**
 * The model cards one process knows, by id: what the worker builds instances of and the
 * coordinator validates requests against. Immutable; extend by creating another registry.
 */
export interface CardRegistry {
  /** Every card, in the order given. */
  readonly cards: readonly ModelCard[];
  /** Every card id, in the order given. */
  readonly ids: readonly string[];
  /** The ids of the cards a worker that names no models loads (`loadByDefault`), in order. */
  readonly defaultIds: readonly string[];
  has(id: string): boolean;
  /** The card registered under `id`. @throws FlowfleetError MODEL_UNKNOWN_CARD listing the ids */
  get(id: string): ModelCard;
  /**
   * What a rollout of `model` needs from a worker: runs the card's request rules (the same
   * `resolveRequest` the runtime runs), then derives the kernel ops and component kinds.
   * @throws FlowfleetError MODEL_UNKNOWN_CARD, MODEL_INVALID_REQUEST
   */
  capabilities(model: string, request: SamplingRequest): CardCapabilities;
  /** Every component kind of every card, sorted, without duplicates. */
  componentKinds(): string[];
}

/**
 * A registry of `cards`.
 * @throws FlowfleetError MODEL_DUPLICATE_CARD when two cards share an id
 */
export function createCardRegistry(cards: readonly ModelCard[]): CardRegistry {
  const byId = new Map<string, ModelCard>();
  for (const card of cards) {
    if (byId.has(card.id)) {
      throw new FlowfleetError('MODEL_DUPLICATE_CARD', `two model cards have the id ${card.id}`, {
        details: { id: card.id },
      });
    }
    byId.set(card.id, card);
  }
  const ids = Object.freeze([...byId.keys()]);
  const get = (id: string): ModelCard => {
    const card = byId.get(id);
    if (card === undefined) {
      throw new FlowfleetError('MODEL_UNKNOWN_CARD', `unknown model card ${id}`, {
        details: { id, known: [...ids] },
      });
    }
    return card;
  };
  return Object.freeze({
    cards: Object.freeze([...byId.values()]),
    ids,
    defaultIds: Object.freeze(
      [...byId.values()].filter((card) => card.loadByDefault).map((card) => card.id),
    ),
    has: (id: string) => byId.has(id),
    get,
    capabilities(model: string, request: SamplingRequest): CardCapabilities {
      const card = get(model);
      const resolved = card.resolveRequest(request);
      return {
        ops: [...card.requiredOps(resolved)],
        componentKinds: [...new Set(card.components.map((component) => component.kind))],
      };
    },
    componentKinds: () =>
      [...new Set(cards.flatMap((card) => card.components.map((c) => c.kind)))].sort(),
  });
}

/** The cards flowfleet ships: every card list of `shipped-families.ts`, family by family. */
export const DEFAULT_CARD_REGISTRY: CardRegistry = createCardRegistry(
  Object.values(SHIPPED_FAMILIES).flat(),
);
