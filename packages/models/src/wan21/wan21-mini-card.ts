import { WAN21_MINI } from './wan21-config.js';
import { createWan21Card } from './wan21-card.js';

/** The wan21-mini card: the tiny Wan2.1-structured model the CPU reference runs quickly. */
export const wan21MiniCard = createWan21Card({ id: 'wan21-mini', config: WAN21_MINI });
