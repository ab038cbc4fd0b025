import type { CapturedForward, ComponentForward, InputDims, WeightSet } from '@flowfleet/platform';
import { AsyncLock } from './async-lock.js';
import type { GraphKeyParts } from './graph-key.js';
import type { StepInstance, StepResult, WorkPlan } from '@flowfleet/models';
import { StaticWorkspace } from './static-workspace.js';

/** What eviction predicates see of a graph (live or still being captured). */
export interface GraphIdentity {
  readonly parts: GraphKeyParts;
  readonly components: ReadonlySet<string>;
}

export interface PendingCapture extends GraphIdentity {
  readonly work: Promise<GraphEntry>;
  /** Evicted while being captured: serve the step that asked for it, then dispose. */
  doomed: boolean;
}

export interface GraphEntry extends GraphIdentity {
  readonly key: string;
  readonly workspace: StaticWorkspace;
  readonly lock: AsyncLock;
  replays: number;
  disposed: boolean;
  /** Captured after its eviction: never stored, disposed once its one step ran. */
  orphan: boolean;
}

/** A component forward pinned to one weight set: the captured form of a backend without one. */
function pinnedForward(component: ComponentForward, weights: WeightSet): CapturedForward {
  return {
    run: (inputs) => component.run(inputs, weights),
    bytesHeld: 0,
    dispose: async () => {},
  };
}

/** The captured form of one component: its own `capture` when it has one, else pinned weights. */
async function captureComponent(
  instance: StepInstance,
  id: string,
  dims: InputDims,
): Promise<CapturedForward> {
  const component = instance.component(id);
  const weights = instance.weights(id);
  if (component.capture !== undefined) return component.capture(weights, dims);
  return pinnedForward(component, weights);
}

/**
 * Captures a plan's graph: each of `graphComponents` at its dims (all disposed again if one
 * fails), the `graphKernels` resolved once, and a static workspace shaped by `graphInputs`.
 */
export async function buildGraphEntry<R extends StepResult>(
  key: string,
  parts: GraphKeyParts,
  components: ReadonlySet<string>,
  plan: WorkPlan<R>,
  instance: StepInstance,
): Promise<GraphEntry> {
  const forwards = new Map<string, CapturedForward>();
  try {
    for (const [id, dims] of Object.entries(plan.graphComponents ?? {})) {
      forwards.set(id, await captureComponent(instance, id, dims));
    }
  } catch (error) {
    await Promise.allSettled([...forwards.values()].map((f) => f.dispose()));
    throw error;
  }
  const kernels = new Map<string, unknown>();
  for (const op of plan.graphKernels ?? []) kernels.set(op, instance.kernels.get(op));
  const workspace = new StaticWorkspace({
    inputs: plan.graphInputs!,
    workspaceBytes: plan.workspaceBytes,
    forwards,
    kernels,
  });
  return {
    key,
    parts,
    components,
    workspace,
    lock: new AsyncLock(),
    replays: 0,
    disposed: false,
    orphan: false,
  };
}
