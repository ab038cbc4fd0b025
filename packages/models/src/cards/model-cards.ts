import { FlowfleetError } from '@flowfleet/errors';
import type { ModelCard } from './model-card.js';
import { wan21MiniCard } from './wan21-mini-card.js';

/** Every model card flowfleet ships, by id. */
export const MODEL_CARDS: ReadonlyMap<string, ModelCard> = new Map([
  [wan21MiniCard.id, wan21MiniCard],
]);

/**
 * The card registered under `id`.
 * @throws MODEL_UNKNOWN_CARD listing the known ids.
 */
export function getModelCard(id: string): ModelCard {
  const card = MODEL_CARDS.get(id);
  if (card === undefined) {
    throw new FlowfleetError('MODEL_UNKNOWN_CARD', `unknown model card ${id}`, {
      details: { id, known: [...MODEL_CARDS.keys()] },
    });
  }
  return card;
}
