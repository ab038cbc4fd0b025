import { FlowfleetError } from '@flowfleet/errors';
import { CaptureCounters, type CaptureStats, type EagerBreakReason } from './capture-stats.js';
import { graphKeyString, type GraphKeyParts } from './graph-key.js';
import {
  buildGraphEntry,
  type GraphEntry,
  type GraphIdentity,
  type PendingCapture,
} from './graph-entry.js';
import type { StepInstance, StepOverride, StepResult, WorkPlan } from '@flowfleet/models';

/** Where the capturer runs: the first two fields of every graph key. */
export interface GraphCapturerOptions {
  readonly device: string;
  readonly arch: string;
}

/** How `dispatch` ran a step. */
export type DispatchOutcome<R> =
  | { readonly mode: 'capture'; readonly result: R; readonly captureMs: number }
  | { readonly mode: 'replay'; readonly result: R }
  | { readonly mode: 'eager-break'; readonly result: R; readonly reason: EagerBreakReason };

/** A live graph, as listed by `graphs()`. */
export interface GraphInfo {
  readonly key: string;
  readonly parts: GraphKeyParts;
  /** Components the graph names (weights in its key or captured forwards). */
  readonly components: readonly string[];
  readonly workspaceBytes: number;
  readonly bytesHeld: number;
  readonly replays: number;
}

/**
 * Captures a step's graph once per key and replays it (DESIGN.md §3). One per ModelInstance,
 * shared by every request: the key is (device, arch, loopId, shapeSig, weight versions of the
 * components the graph bakes in, graphKey). A replay binds the current step's inputs into the
 * graph's static workspace and runs the current plan's `graphFn`, one replay at a time per graph.
 */
export class GraphCapturer {
  readonly #options: GraphCapturerOptions;
  readonly #graphs = new Map<string, GraphEntry>();
  readonly #pending = new Map<string, PendingCapture>();
  readonly #counters = new CaptureCounters();
  #closed = false;

  constructor(options: GraphCapturerOptions) {
    this.#options = options;
  }

  /**
   * Runs `plan` captured (first time for its key), replayed, or eagerly when it cannot be
   * captured (not capturable, an override present, no graphFn) — counted as an eager-break.
   * @throws FlowfleetError RT_GRAPH_KEY_COLLISION, RT_GRAPH_BIND_MISMATCH, RT_INSTANCE_CLOSED
   */
  async dispatch<R extends StepResult>(
    loopId: string,
    plan: WorkPlan<R>,
    instance: StepInstance,
    override?: StepOverride,
  ): Promise<DispatchOutcome<R>> {
    this.#checkOpen();
    const reason = this.#breakReason(plan, override);
    if (reason !== undefined) {
      const result = await plan.run(instance, override);
      this.#counters.count('eager-break', reason);
      return { mode: 'eager-break', result, reason };
    }
    const parts = this.#keyParts(loopId, plan, instance);
    const key = graphKeyString(parts);
    for (;;) {
      let entry = this.#graphs.get(key);
      let captureMs: number | undefined;
      if (entry === undefined) {
        const pending = this.#pending.get(key);
        if (pending !== undefined) entry = await pending.work;
        else {
          const started = performance.now();
          entry = await this.#capture(key, parts, plan, instance);
          captureMs = performance.now() - started;
        }
      }
      if (entry.workspace.workspaceBytes !== plan.workspaceBytes) {
        throw new FlowfleetError(
          'RT_GRAPH_KEY_COLLISION',
          `graph key already holds a workspace of ${entry.workspace.workspaceBytes} bytes; the plan declares ${plan.workspaceBytes}`,
          {
            details: {
              key,
              capturedBytes: entry.workspace.workspaceBytes,
              planBytes: plan.workspaceBytes,
            },
          },
        );
      }
      const graph = entry;
      const ran = await graph.lock.run(async () => {
        // Evicted while this step waited for the workspace: capture again.
        if (graph.disposed) return undefined;
        graph.workspace.bind(plan.graphInputs!);
        return { result: await plan.graphFn!(instance, graph.workspace) };
      });
      if (graph.orphan && !graph.disposed) {
        graph.disposed = true;
        await graph.lock.run(() => graph.workspace.dispose());
      }
      if (ran === undefined) continue;
      if (captureMs !== undefined) {
        this.#counters.count('capture', undefined, captureMs);
        return { mode: 'capture', result: ran.result, captureMs };
      }
      graph.replays++;
      this.#counters.count('replay');
      return { mode: 'replay', result: ran.result };
    }
  }

  /**
   * Drops and disposes every graph that names one of `componentIds`; returns how many.
   * A graph in the middle of a replay is disposed when that replay ends.
   */
  async invalidate(componentIds: readonly string[]): Promise<number> {
    return this.#evict((entry) => componentIds.some((id) => entry.components.has(id)));
  }

  /** Drops and disposes the graphs that bake in `version` of `componentId`; returns how many. */
  async invalidateVersion(componentId: string, version: number): Promise<number> {
    return this.#evict((entry) => entry.parts.weights[componentId] === version);
  }

  /** Instance-wide counters plus live graphs and bytes held. */
  stats(): CaptureStats {
    let bytesHeld = 0;
    for (const entry of this.#graphs.values()) bytesHeld += entry.workspace.bytesHeld;
    return this.#counters.snapshot(this.#graphs.size, bytesHeld);
  }

  /** The live graphs. */
  graphs(): readonly GraphInfo[] {
    return [...this.#graphs.values()].map((entry) => ({
      key: entry.key,
      parts: entry.parts,
      components: [...entry.components].sort(),
      workspaceBytes: entry.workspace.workspaceBytes,
      bytesHeld: entry.workspace.bytesHeld,
      replays: entry.replays,
    }));
  }

  /** Disposes every graph; idempotent. Later dispatches throw RT_INSTANCE_CLOSED. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([...this.#pending.values()].map((p) => p.work));
    await this.#evict(() => true);
  }

  #breakReason<R extends StepResult>(
    plan: WorkPlan<R>,
    override: StepOverride | undefined,
  ): EagerBreakReason | undefined {
    if (!plan.capturable) return 'not-capturable';
    if (override !== undefined) return 'override';
    if (plan.graphFn === undefined || plan.graphInputs === undefined) return 'no-graph-fn';
    return undefined;
  }

  #keyParts<R extends StepResult>(
    loopId: string,
    plan: WorkPlan<R>,
    instance: StepInstance,
  ): GraphKeyParts {
    const named = new Set([...plan.components, ...Object.keys(plan.graphComponents ?? {})]);
    const weights: Record<string, number> = {};
    for (const id of [...named].sort()) {
      const version = instance.versions[id];
      if (version === undefined) {
        throw new FlowfleetError(
          'RT_UNKNOWN_COMPONENT',
          `no pinned weights for component '${id}'`,
          {
            details: { component: id, known: Object.keys(instance.versions) },
          },
        );
      }
      weights[id] = version;
    }
    const { device, arch } = this.#options;
    return { device, arch, loopId, shapeSig: plan.shapeSig, weights, graphKey: plan.graphKey };
  }

  async #capture<R extends StepResult>(
    key: string,
    parts: GraphKeyParts,
    plan: WorkPlan<R>,
    instance: StepInstance,
  ): Promise<GraphEntry> {
    const components = new Set([
      ...Object.keys(parts.weights),
      ...Object.keys(plan.graphComponents ?? {}),
    ]);
    const pending: PendingCapture = {
      parts,
      components,
      work: buildGraphEntry(key, parts, components, plan, instance),
      doomed: false,
    };
    this.#pending.set(key, pending);
    try {
      const entry = await pending.work;
      if (this.#closed) {
        entry.disposed = true;
        await entry.workspace.dispose();
        this.#checkOpen();
      }
      // A doomed graph still serves the step that captured it; dispatch disposes it after.
      if (pending.doomed) entry.orphan = true;
      else this.#graphs.set(key, entry);
      return entry;
    } finally {
      this.#pending.delete(key);
    }
  }

  async #evict(matches: (graph: GraphIdentity) => boolean): Promise<number> {
    for (const pending of this.#pending.values()) {
      if (matches(pending)) pending.doomed = true;
    }
    const doomed = [...this.#graphs.values()].filter(matches);
    for (const entry of doomed) {
      this.#graphs.delete(entry.key);
      this.#counters.evictions++;
    }
    const results = await Promise.allSettled(
      doomed.map((entry) =>
        entry.lock.run(async () => {
          if (entry.disposed) return;
          entry.disposed = true;
          await entry.workspace.dispose();
        }),
      ),
    );
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed.length > 0) throw new AggregateError(failed.map((r) => r.reason as unknown));
    return doomed.length;
  }

  #checkOpen(): void {
    if (this.#closed) {
      throw new FlowfleetError('RT_INSTANCE_CLOSED', 'the graph capturer is closed');
    }
  }
}
