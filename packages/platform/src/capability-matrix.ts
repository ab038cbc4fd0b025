import type {
  ComponentBuilder,
  KernelFn,
  ManifestRow,
  RejectedCandidate,
  TupleRegistry,
} from '@flowfleet/registry';
import { componentCandidates, kernelCandidates, type ChainOrigin } from './fallback-chains.js';
import type { PlatformFacts } from './platform-types.js';

/** The cell this platform would pick for one (op, variant) or (kind, variant); null when none. */
export interface MatrixPick {
  /** The op (kernels) or kind (components). */
  readonly name: string;
  readonly variant: string;
  readonly key: readonly string[] | null;
  readonly source: string | null;
  readonly rejected: readonly RejectedCandidate[];
}

/** Every declared cell (unavailable ones too) and what this platform would pick. */
export interface CapabilityMatrix {
  readonly facts: PlatformFacts;
  readonly cells: readonly ManifestRow[];
  /**
   * One per declared (name, variant). For components a null key means the card's factory (the
   * TS reference) would build it.
   */
  readonly picks: readonly MatrixPick[];
}

function distinctPairs(
  cells: readonly ManifestRow[],
  nameField: string,
): (readonly [string, string])[] {
  const seen = new Map<string, readonly [string, string]>();
  for (const row of cells) {
    const name = row.key[nameField] ?? '';
    const variant = row.key['variant'] ?? '';
    seen.set(`${name}\u0000${variant}`, [name, variant]);
  }
  return [...seen.values()];
}

function pick<F>(
  registry: TupleRegistry<F>,
  name: string,
  variant: string,
  candidates: readonly (readonly string[])[],
): MatrixPick {
  const { cell, rejected } = registry.resolveFirst(candidates);
  return {
    name,
    variant,
    key: cell?.key ?? null,
    source: cell?.source ?? null,
    rejected,
  };
}

/**
 * The kernel capability matrix: `KERNELS.manifest()` plus the pick per declared (op, variant).
 * Runs availability predicates only (never loads onnxruntime-node or touches a device).
 * @throws FlowfleetError PLAT_UNKNOWN_ARCH when the platform's arch is unknown
 */
export function kernelMatrix(
  registry: TupleRegistry<KernelFn>,
  facts: PlatformFacts,
  origin: ChainOrigin,
): CapabilityMatrix {
  const cells = registry.manifest();
  const picks = distinctPairs(cells, 'op').map(([op, variant]) =>
    pick(registry, op, variant, kernelCandidates(op, variant, origin)),
  );
  return { facts, cells, picks };
}

/** The component capability matrix: `COMPONENTS.manifest()` plus the pick per (kind, variant). */
export function componentMatrix(
  registry: TupleRegistry<ComponentBuilder>,
  facts: PlatformFacts,
): CapabilityMatrix {
  const cells = registry.manifest();
  const picks = distinctPairs(cells, 'kind').map(([kind, variant]) =>
    pick(registry, kind, variant, componentCandidates(kind, variant, facts.device)),
  );
  return { facts, cells, picks };
}
