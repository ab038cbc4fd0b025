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

/** JSON with object keys sorted at every level, so equal parts always give the same string. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The one place a graph key string is built: canonical JSON of its parts. */
export function graphKeyString(parts: GraphKeyParts): string {
  return canonical({
    device: parts.device,
    arch: parts.arch,
    loopId: parts.loopId,
    shapeSig: parts.shapeSig,
    weights: parts.weights,
    graphKey: parts.graphKey,
  });
}
