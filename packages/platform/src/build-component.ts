import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import {
  DEFAULT_VARIANT,
  type ComponentBuilder,
  type RejectedCandidate,
  type TupleRegistry,
} from '@flowfleet/registry';
import { componentCandidates } from './fallback-chains.js';
import { describeRejected } from './kernel-table.js';
import type { ComponentBuildContext, ComponentSpec, Device } from './platform-types.js';

/** The `source` of a component built by the card's own `factory` (the TS reference rung). */
export const CARD_FACTORY_SOURCE = 'card';

/** What `buildComponent` returns: the component and which rung of the ladder built it. */
export interface ComponentBuild<TComponent> {
  readonly component: TComponent;
  /** The backend that built it (`ort-cpu`, …) or `card` for the card's factory. */
  readonly source: string;
  /** The COMPONENTS key (kind, device, variant) that built it; null for the card's factory. */
  readonly key: readonly string[] | null;
  /** Cells passed over first, with why (a builder's coded failure counts as one). */
  readonly rejected: readonly RejectedCandidate[];
}

type SpecBuilder<TInstance, TComponent> = (
  spec: ComponentSpec<TInstance, TComponent>,
  instance: TInstance,
  context: ComponentBuildContext,
) => TComponent | Promise<TComponent>;

/**
 * Builds a component: the first registered and available COMPONENTS builder along the device
 * chain (kind, device, variant → default), else the card's `factory`. A builder that fails with a
 * coded FlowfleetError (e.g. a provider that will not load) is recorded as rejected and the walk
 * goes on; any other throw is a defect and propagates. Builders and the factory get `context`
 * (the platform's compute pool) as their third argument.
 * @throws FlowfleetError PLAT_NO_COMPONENT when no builder is available and the spec has no factory
 */
export async function buildComponent<TInstance, TComponent>(
  registry: TupleRegistry<ComponentBuilder>,
  device: Device,
  spec: ComponentSpec<TInstance, TComponent>,
  instance: TInstance,
  context: ComponentBuildContext = { pool: undefined },
): Promise<ComponentBuild<TComponent>> {
  const rejected: RejectedCandidate[] = [];
  let candidates = componentCandidates(spec.kind, spec.variant ?? DEFAULT_VARIANT, device);
  while (candidates.length > 0) {
    const resolution = registry.resolveFirst(candidates);
    rejected.push(...resolution.rejected);
    const cell = resolution.cell;
    if (cell === undefined) break;
    const won = cell.key.join('\u0000');
    candidates = candidates.slice(candidates.findIndex((key) => key.join('\u0000') === won) + 1);
    const build = cell.fn as unknown as SpecBuilder<TInstance, TComponent>;
    try {
      const component = await build(spec, instance, context);
      return { component, source: cell.source, key: cell.key, rejected };
    } catch (error) {
      if (!isFlowfleetError(error)) throw error;
      rejected.push({ key: cell.key, reason: `build failed: ${error.code}: ${error.message}` });
    }
  }
  if (typeof spec.factory !== 'function') {
    throw new FlowfleetError(
      'PLAT_NO_COMPONENT',
      `no builder for component '${spec.id}' (kind '${spec.kind}') on ${device} and no card factory; rejected:\n${describeRejected(rejected)}`,
      { details: { id: spec.id, kind: spec.kind, device, rejected } },
    );
  }
  const component = await spec.factory(spec, instance, context);
  return { component, source: CARD_FACTORY_SOURCE, key: null, rejected };
}
