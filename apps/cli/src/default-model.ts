import { DEFAULT_CARD_REGISTRY, type ModelCard, type ModelComponentSpec } from '@flowfleet/models';

/** The model a command runs when none is named: the first card flowfleet ships. */
export const DEFAULT_MODEL_ID: string = DEFAULT_CARD_REGISTRY.ids[0] ?? '';

/**
 * The component `id` of the shipped card `model` (the demo pushes and rolls out on a card's
 * components by id; which card it is stays the registry's business).
 * @throws FlowfleetError MODEL_UNKNOWN_CARD; Error when the card has no such component (a defect)
 */
export function shippedComponent(model: string, id: string): ModelComponentSpec {
  const card: ModelCard = DEFAULT_CARD_REGISTRY.get(model);
  const component = card.components.find((c) => c.id === id);
  if (component === undefined) throw new Error(`model card ${model} has no component ${id}`);
  return component;
}
