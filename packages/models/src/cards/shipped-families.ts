// The model families flowfleet ships, one line each: DEFAULT_CARD_REGISTRY registers every card
// list exported here. These lines are the only ones outside a family's folder that name a model
// (test/lint/model-names.test.ts holds it so).
export { WAN21_CARDS } from '../wan21/wan21-cards.js';
