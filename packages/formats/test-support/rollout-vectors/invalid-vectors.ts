import { containerVectors } from './container-vectors.js';
import { rolloutVectors } from './rollout-layer-vectors.js';
import type { InvalidVectorSpec } from './vector-parts.js';

/** The malformed vectors of RolloutFile v1, each breaking exactly one rule. */
export function invalidVectorSpecs(): InvalidVectorSpec[] {
  return [...containerVectors(), ...rolloutVectors()];
}
