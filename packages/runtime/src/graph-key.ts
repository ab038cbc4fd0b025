import { canonicalJson } from '@flowfleet/formats';
import type { GraphKey, ShapeSig } from '@flowfleet/models';

/** The parts of a captured graph's key (DESIGN.md §3). */
export interface GraphKeyParts {
  readonly device: string;
  readonly arch: string;
  readonly loopId: string;
  readonly shapeSig: ShapeSig;
  /** Resident weight version of every component the graph bakes in. */
  readonly weights: Readonly<Record<string, number>>;
  readonly graphKey: GraphKey;
}

/**
 * The one place a graph key string is built: canonical JSON of its parts (formats' `canonicalJson`,
 * so equal parts give the same string whatever order their keys were built in).
 */
export function graphKeyString(parts: GraphKeyParts): string {
  return canonicalJson({
    device: parts.device,
    arch: parts.arch,
    loopId: parts.loopId,
    shapeSig: parts.shapeSig,
    weights: parts.weights,
    graphKey: parts.graphKey,
  });
}
