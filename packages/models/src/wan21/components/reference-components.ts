import { FlowfleetError } from '@flowfleet/errors';
import type {
  ComponentForward,
  ComponentSpec,
  TensorData,
  TensorMap,
  WeightSet,
} from '@flowfleet/platform';
import type { DitWorkspaceSlot } from '../reference/dit-forward.js';
import type { Wan21Config } from '../wan21-config.js';
import { CPU_REFERENCE_SOURCE } from '../../components/reference-source.js';
import { runReferenceForward, type ReferenceKind } from './reference-forward.js';
import { WorkerReferenceComponent } from './worker-reference-component.js';

/** A card's component factory: the terminal rung of `buildComponent`. */
export type ComponentFactory = ComponentSpec<unknown, ComponentForward>['factory'];

/** Where a TS reference forward runs. */
export type ReferencePlacement = 'worker' | 'caller';

/** Options of the reference factories. */
export interface ReferenceFactoryOptions {
  /**
   * `worker` (default): in the compute pool the platform hands the factory (`createPlatform({
   * pool})`), so the event loop stays free (DESIGN.md §3); `caller`: on the calling thread
   * (blocks it for the whole forward; for tests and tools).
   */
  readonly placement?: ReferencePlacement;
}

/** A reference component on the calling thread; keeps the workspace of the last input sizes. */
function inThreadComponent(kind: ReferenceKind, config: Wan21Config): ComponentForward {
  const slot: DitWorkspaceSlot = {};
  return {
    kind,
    source: CPU_REFERENCE_SOURCE,
    async run(inputs: TensorMap, weights: WeightSet): Promise<Record<string, TensorData>> {
      return runReferenceForward(kind, config, inputs, weights.tensors, slot);
    },
    async dispose(): Promise<void> {
      delete slot.workspace;
    },
  };
}

function createReferenceFactory(
  kind: ReferenceKind,
  config: Wan21Config,
  options: ReferenceFactoryOptions,
): ComponentFactory {
  if (options.placement === 'caller') return () => inThreadComponent(kind, config);
  return (spec, _instance, context) => {
    const pool = context?.pool;
    if (pool === undefined) {
      throw new FlowfleetError(
        'MODEL_NO_COMPUTE_POOL',
        `the TS reference ${kind} '${spec.id}' runs in a compute pool, and the platform has none (createPlatform({ pool }))`,
        { details: { component: spec.id, kind } },
      );
    }
    return new WorkerReferenceComponent(kind, config, pool);
  };
}

/**
 * Factory of the TS reference DiT: inputs `latent` [B,C,F,H,W] f32, `timestep` [B] f32, `context`
 * [B,L,textDim] f32 → `velocity` [B,C,F,H,W] f32. By default the forward runs in the platform's
 * compute pool and the component can `capture` (a workspace pinned in a thread).
 * @throws (from the factory) MODEL_NO_COMPUTE_POOL when the platform has no compute pool.
 */
export function createDitReferenceFactory(
  config: Wan21Config,
  options: ReferenceFactoryOptions = {},
): ComponentFactory {
  return createReferenceFactory('dit', config, options);
}

/**
 * Factory of the TS reference text encoder: input `tokens` [B, L] int32 or int64 → `context`
 * [B, L, textDim] f32. Placement as for `createDitReferenceFactory`.
 */
export function createTextEncoderReferenceFactory(
  config: Wan21Config,
  options: ReferenceFactoryOptions = {},
): ComponentFactory {
  return createReferenceFactory('text_encoder', config, options);
}
