import type {
  ComponentForward,
  ComponentSpec,
  TensorData,
  TensorMap,
  WeightSet,
} from '@flowfleet/platform';
import type { DitWorkspaceSlot } from '../reference/dit-forward.js';
import type { ReferenceWorkerPool } from '../reference-worker/reference-worker-pool.js';
import { sharedReferencePool } from '../reference-worker/shared-reference-pool.js';
import type { Wan21Config } from '../wan21-config.js';
import { CPU_REFERENCE_SOURCE } from './reference-source.js';
import { runReferenceForward, type ReferenceKind } from './reference-forward.js';
import { WorkerReferenceComponent } from './worker-reference-component.js';

/** A card's component factory: the terminal rung of `buildComponent`. */
export type ComponentFactory = ComponentSpec<unknown, ComponentForward>['factory'];

/** Where a TS reference forward runs. */
export type ReferencePlacement = 'worker' | 'caller';

/** Options of the reference factories. */
export interface ReferenceFactoryOptions {
  /**
   * `worker` (default): in a worker_threads pool, so the event loop stays free (DESIGN.md §3);
   * `caller`: on the calling thread (blocks it for the whole forward; for tests and tools).
   */
  readonly placement?: ReferencePlacement;
  /** The pool of the `worker` placement (default: the process-wide `sharedReferencePool`). */
  readonly pool?: () => Promise<ReferenceWorkerPool>;
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
  const pool = options.pool ?? sharedReferencePool;
  return () => new WorkerReferenceComponent(kind, config, pool);
}

/**
 * Factory of the TS reference DiT: inputs `latent` [B,C,F,H,W] f32, `timestep` [B] f32, `context`
 * [B,L,textDim] f32 → `velocity` [B,C,F,H,W] f32. By default the forward runs in the reference
 * worker pool and the component can `capture` (a workspace pinned in the worker).
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
