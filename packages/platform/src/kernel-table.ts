import { FlowfleetError } from '@flowfleet/errors';
import {
  DEFAULT_VARIANT,
  type KernelFn,
  type RejectedCandidate,
  type TupleRegistry,
} from '@flowfleet/registry';
import { kernelCandidates, type ChainOrigin } from './fallback-chains.js';

/** Which cell a (op, variant) lookup settled on. */
export interface KernelResolution {
  readonly key: readonly string[];
  readonly source: string;
  readonly workspaceBytes: number;
  /** Candidates passed over before the winner, with why. */
  readonly rejected: readonly RejectedCandidate[];
}

interface Resolved {
  readonly fn: KernelFn;
  readonly resolution: KernelResolution;
}

/** Renders rejected candidates one per line: `(op, device, arch, variant): reason`. */
export function describeRejected(rejected: readonly RejectedCandidate[]): string {
  return rejected.map(({ key, reason }) => `  (${key.join(', ')}): ${reason}`).join('\n');
}

/**
 * The kernels this platform runs: each (op, variant) is resolved once along the candidate order
 * (device > arch > variant) and the callable cached, so a hot loop never re-probes.
 */
export class KernelTable {
  readonly #registry: TupleRegistry<KernelFn>;
  readonly #origin: ChainOrigin;
  readonly #resolved = new Map<string, Resolved>();

  constructor(registry: TupleRegistry<KernelFn>, origin: ChainOrigin) {
    this.#registry = registry;
    this.#origin = origin;
  }

  /**
   * The callable for `op` (typed by the caller, who knows the op's signature).
   * @throws FlowfleetError PLAT_NO_KERNEL listing every rejected candidate, PLAT_UNKNOWN_ARCH
   */
  get<F>(op: string, variant: string = DEFAULT_VARIANT): F {
    return this.#resolve(op, variant).fn as unknown as F;
  }

  /**
   * Which cell `get(op, variant)` uses, with its source and workspace size.
   * @throws FlowfleetError PLAT_NO_KERNEL, PLAT_UNKNOWN_ARCH
   */
  resolution(op: string, variant: string = DEFAULT_VARIANT): KernelResolution {
    return this.#resolve(op, variant).resolution;
  }

  /** The candidate keys `get(op, variant)` walks, in order. @throws FlowfleetError PLAT_UNKNOWN_ARCH */
  candidates(op: string, variant: string = DEFAULT_VARIANT): readonly (readonly string[])[] {
    return kernelCandidates(op, variant, this.#origin);
  }

  #resolve(op: string, variant: string): Resolved {
    const id = `${op}\u0000${variant}`;
    const hit = this.#resolved.get(id);
    if (hit !== undefined) return hit;
    // Misses are not cached: a provider may become available later (e.g. after a probe).
    const { cell, rejected } = this.#registry.resolveFirst(this.candidates(op, variant));
    if (cell === undefined) {
      const { device, arch } = this.#origin;
      throw new FlowfleetError(
        'PLAT_NO_KERNEL',
        `no kernel for op '${op}' (variant '${variant}') on ${device}/${arch}; rejected:\n${describeRejected(rejected)}`,
        { details: { op, variant, device, arch, rejected } },
      );
    }
    const workspaceBytes = cell.meta['workspaceBytes'];
    const resolved: Resolved = {
      fn: cell.fn,
      resolution: Object.freeze({
        key: cell.key,
        source: cell.source,
        workspaceBytes: typeof workspaceBytes === 'number' ? workspaceBytes : 0,
        rejected: Object.freeze([...rejected]),
      }),
    };
    this.#resolved.set(id, resolved);
    return resolved;
  }
}
