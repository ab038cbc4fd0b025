import type { ModelCard } from '../cards/model-card.js';
import type { Wan21Config } from './wan21-config.js';
import { wan21MiniCard, wan21MiniEmbedsCard, wan21MiniVaeCard } from './wan21-mini-card.js';
import { wan21T2v13bCard } from './wan21-t2v-1-3b-card.js';

/** The wan21 cards flowfleet ships; `cards/shipped-families.ts` registers them by default. */
export const WAN21_CARDS: readonly ModelCard<Wan21Config>[] = Object.freeze([
  wan21MiniCard,
  wan21MiniVaeCard,
  wan21MiniEmbedsCard,
  wan21T2v13bCard,
]);
