import { FlowfleetError } from '@flowfleet/errors';
import type { TensorData, TensorMap, WeightSet } from '@flowfleet/platform';
import type { ReferenceKind } from '../components/reference-forward.js';
import type { Wan21Config } from '../wan21-config.js';
import type {
  ReferenceCaptureInfo,
  ReferenceInputDims,
  ReferenceWorkerStats,
} from './reference-worker-protocol.js';
import { ReferenceWorkerSlot } from './reference-worker-slot.js';

/** How many reference worker threads. */
export interface ReferenceWorkerPoolOptions {
  /** Worker threads (default 1). Each holds its own copy of the weight sets it has used. */
  readonly threads?: number;
}

/** One eager forward: a component's kind, config and workspace key, the weights and the inputs. */
export interface ReferenceForwardRequest {
  readonly kind: ReferenceKind;
  readonly config: Wan21Config;
  readonly weights: WeightSet;
  /** Whose workspace the worker reuses between calls (one per component). */
  readonly workspaceKey: string;
  readonly inputs: TensorMap;
}

/** What a forward is captured at: kind, config, the pinned weights and fixed input dims. */
export interface ReferenceCaptureRequest {
  readonly kind: ReferenceKind;
  readonly config: Wan21Config;
  readonly weights: WeightSet;
  readonly inputDims: ReferenceInputDims;
}

interface CaptureEntry {
  readonly id: string;
  readonly request: ReferenceCaptureRequest;
  /** The worker holding its pinned workspace; replaced when that worker died. */
  home: ReferenceWorkerSlot;
}

/**
 * A pool of worker threads that run the TS reference forward, so a forward (~300 ms for a
 * wan21-mini CFG pair) never blocks the event loop (DESIGN.md §3). Weight sets are uploaded to a
 * worker once per `WeightSet.id` and stay resident until `releaseWeights`; inputs go over as
 * compact copies whose buffers are transferred (the caller keeps its arrays), outputs come back
 * as transferred buffers. A worker that dies is replaced; what it held is re-materialised on use.
 */
export class ReferenceWorkerPool {
  private readonly captures = new Map<string, CaptureEntry>();
  private nextCaptureId = 1;
  private closing: Promise<void> | undefined;

  private constructor(private readonly slots: ReferenceWorkerSlot[]) {}

  /**
   * Starts the workers and waits until each has loaded the reference forward.
   * @throws MODEL_REFERENCE_WORKER_EXITED when a worker cannot start.
   */
  static async create(options: ReferenceWorkerPoolOptions = {}): Promise<ReferenceWorkerPool> {
    const threads = Math.max(1, Math.floor(options.threads ?? 1));
    const slots: ReferenceWorkerSlot[] = [];
    const pool = new ReferenceWorkerPool(slots);
    for (let i = 0; i < threads; i++) slots.push(ReferenceWorkerSlot.spawn(i, pool.onSlotExit));
    try {
      await Promise.all(slots.map((slot) => slot.ready()));
    } catch (error) {
      await pool.close().catch(() => undefined);
      throw error;
    }
    return pool;
  }

  /** Number of worker threads. */
  get threads(): number {
    return this.slots.length;
  }

  /**
   * Runs one eager forward in the least loaded worker (uploading the weights there first if
   * needed) and returns its outputs.
   * @throws MODEL_INPUT_INVALID, MODEL_WEIGHTS_MISMATCH (raised in the worker, same details),
   *   MODEL_REFERENCE_WORKER_EXITED, MODEL_REFERENCE_POOL_CLOSED.
   */
  async forward(request: ReferenceForwardRequest): Promise<Record<string, TensorData>> {
    this.assertOpen();
    const slot = this.pickSlot((s) => (s.weights.has(request.weights.id) ? 0 : 1));
    const { buffers, inputs } = packInputs(request.inputs);
    return this.withWeights(slot, request.weights, () => {
      slot.workspaces.add(request.workspaceKey);
      return slot.call(
        {
          op: 'forward',
          kind: request.kind,
          config: request.config,
          weightsId: request.weights.id,
          workspaceKey: request.workspaceKey,
          inputs,
        },
        buffers,
      );
    });
  }

  /**
   * Pins a forward to one weight set and fixed dims: the worker allocates the workspace for
   * those dims once and keeps it (and a reference to the weights) until `releaseCapture`.
   * @throws MODEL_REFERENCE_WORKER_EXITED, MODEL_REFERENCE_POOL_CLOSED.
   */
  async capture(request: ReferenceCaptureRequest): Promise<{ id: string } & ReferenceCaptureInfo> {
    this.assertOpen();
    const id = `reference-capture-${this.nextCaptureId++}`;
    const entry: CaptureEntry = { id, request, home: this.pickSlot(() => 0) };
    const info = await this.materialiseCapture(entry);
    this.captures.set(id, entry);
    return { id, ...info };
  }

  /**
   * Runs a captured forward on its worker (re-capturing it on a live worker if its own died).
   * @throws MODEL_INPUT_INVALID, MODEL_REFERENCE_WORKER_EXITED, MODEL_REFERENCE_POOL_CLOSED;
   *   MODEL_COMPONENT_DISPOSED for a released capture.
   */
  async runCaptured(captureId: string, inputs: TensorMap): Promise<Record<string, TensorData>> {
    this.assertOpen();
    const entry = this.captures.get(captureId);
    if (entry === undefined) throw releasedError(captureId);
    if (entry.home.isDead || this.slots[entry.home.index] !== entry.home) {
      entry.home = this.pickSlot(() => 0);
    }
    const slot = entry.home;
    slot.reserved += 1;
    try {
      await this.materialiseCapture(entry);
    } finally {
      slot.reserved -= 1;
    }
    // Released while it was being re-materialised: the worker no longer holds it.
    if (this.captures.get(captureId) !== entry) throw releasedError(captureId);
    const packed = packInputs(inputs);
    return slot.call({ op: 'runCaptured', captureId, inputs: packed.inputs }, packed.buffers);
  }

  /** Drops a captured forward's pinned workspace; unknown ids are ignored. */
  async releaseCapture(captureId: string): Promise<void> {
    const entry = this.captures.get(captureId);
    if (entry === undefined) return;
    this.captures.delete(captureId);
    const { home } = entry;
    if (home.captures.delete(captureId) && !home.isDead) {
      await home.call({ op: 'releaseCapture', captureId });
    }
  }

  /** Drops a component's eager workspace from every worker; unknown keys are ignored. */
  async releaseWorkspace(workspaceKey: string): Promise<void> {
    await Promise.all(
      this.slots.map(async (slot) => {
        if (!slot.workspaces.delete(workspaceKey) || slot.isDead) return;
        await slot.call({ op: 'releaseWorkspace', workspaceKey });
      }),
    );
  }

  /**
   * Drops a weight set from every worker (captures keep the tensors they pinned until released);
   * unknown ids are ignored. A later forward with that id uploads it again.
   */
  async releaseWeights(weightsId: string): Promise<void> {
    await Promise.all(
      this.slots.map(async (slot) => {
        if (!slot.weights.delete(weightsId) || slot.isDead) return;
        await slot.call({ op: 'releaseWeights', weightsId });
      }),
    );
  }

  /** Each live worker's counters. */
  async stats(): Promise<ReferenceWorkerStats[]> {
    this.assertOpen();
    const live = this.slots.filter((slot) => !slot.isDead);
    return Promise.all(live.map((slot) => slot.call<ReferenceWorkerStats>({ op: 'stats' })));
  }

  /**
   * Fault injection for tests: makes worker `index` call `process.exit(exitCode)` once it reaches
   * this request. Calls sent after it reject with MODEL_REFERENCE_WORKER_EXITED and the pool
   * starts a replacement worker.
   */
  exitWorkerForTesting(index: number, exitCode = 70): void {
    this.slots[index]?.call({ op: 'exitForTesting', exitCode }).catch(() => undefined);
  }

  /**
   * Terminates every worker (each step runs even if another fails); idempotent. Calls in flight
   * reject with MODEL_REFERENCE_POOL_CLOSED.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const results = await Promise.allSettled(this.slots.map((slot) => slot.terminate()));
      this.captures.clear();
      const failures = results.flatMap((r) =>
        r.status === 'rejected' ? [r.reason as unknown] : [],
      );
      if (failures.length > 0)
        throw new AggregateError(failures, 'reference workers failed to stop');
    })();
    return this.closing;
  }

  private readonly onSlotExit = (slot: ReferenceWorkerSlot, wasReady: boolean): void => {
    // Replace a worker that was serving; one that never started would only crash-loop.
    if (this.closing !== undefined || !wasReady) return;
    const replacement = ReferenceWorkerSlot.spawn(slot.index, this.onSlotExit);
    this.slots[slot.index] = replacement;
    // Its failure to start surfaces as MODEL_REFERENCE_WORKER_EXITED on the calls routed to it.
    replacement.ready().catch(() => undefined);
  };

  private assertOpen(): void {
    if (this.closing !== undefined) {
      throw new FlowfleetError(
        'MODEL_REFERENCE_POOL_CLOSED',
        'the reference worker pool is closed',
      );
    }
  }

  /** The least loaded live worker; ties go to the lower `warmth` (e.g. weights already there). */
  private pickSlot(warmth: (slot: ReferenceWorkerSlot) => number): ReferenceWorkerSlot {
    let best: ReferenceWorkerSlot | undefined;
    for (const slot of this.slots) {
      if (slot.isDead) continue;
      if (
        best === undefined ||
        slot.load < best.load ||
        (slot.load === best.load && warmth(slot) < warmth(best))
      ) {
        best = slot;
      }
    }
    if (best === undefined) {
      throw new FlowfleetError('MODEL_REFERENCE_WORKER_EXITED', 'no reference worker is running');
    }
    return best;
  }

  /**
   * Uploads the weights to `slot` unless there (again if released while this waited), then
   * calls `send` in the same tick as the final check, so a release issued later reaches the
   * worker after the request `send` posts. The slot counts the dispatch as load meanwhile.
   */
  private async withWeights<T>(
    slot: ReferenceWorkerSlot,
    weights: WeightSet,
    send: () => Promise<T>,
  ): Promise<T> {
    slot.reserved += 1;
    let reserved = true;
    try {
      for (;;) {
        const uploaded = this.materialiseWeights(slot, weights);
        await uploaded;
        if (slot.weights.get(weights.id) === uploaded) {
          slot.reserved -= 1;
          reserved = false;
          return send();
        }
      }
    } finally {
      if (reserved) slot.reserved -= 1;
    }
  }

  private materialiseWeights(slot: ReferenceWorkerSlot, weights: WeightSet): Promise<unknown> {
    let uploaded = slot.weights.get(weights.id);
    if (uploaded === undefined) {
      // Cloned, not transferred: the caller keeps its weight set.
      const call = slot.call({
        op: 'uploadWeights',
        weightsId: weights.id,
        tensors: weights.tensors,
      });
      slot.weights.set(weights.id, call);
      call.catch(() => {
        if (slot.weights.get(weights.id) === call) slot.weights.delete(weights.id);
      });
      uploaded = call;
    }
    return uploaded;
  }

  private materialiseCapture(entry: CaptureEntry): Promise<ReferenceCaptureInfo> {
    const slot = entry.home;
    let captured = slot.captures.get(entry.id) as Promise<ReferenceCaptureInfo> | undefined;
    if (captured === undefined) {
      const { kind, config, weights, inputDims } = entry.request;
      const call = this.withWeights(slot, weights, () =>
        slot.call<ReferenceCaptureInfo>({
          op: 'capture',
          captureId: entry.id,
          kind,
          config,
          weightsId: weights.id,
          inputDims,
        }),
      );
      slot.captures.set(entry.id, call);
      call.catch(() => {
        if (slot.captures.get(entry.id) === call) slot.captures.delete(entry.id);
      });
      captured = call;
    }
    return captured;
  }
}

function releasedError(captureId: string): FlowfleetError {
  return new FlowfleetError(
    'MODEL_COMPONENT_DISPOSED',
    `captured forward '${captureId}' was released`,
    {
      details: { captureId },
    },
  );
}

/**
 * Compact copies of the inputs whose buffers can be transferred: the caller keeps its arrays
 * (often views into a static workspace), and only the viewed bytes cross, never a whole arena.
 */
function packInputs(inputs: TensorMap): {
  inputs: Record<string, TensorData>;
  buffers: ArrayBuffer[];
} {
  const packed: Record<string, TensorData> = {};
  const buffers: ArrayBuffer[] = [];
  for (const [name, tensor] of Object.entries(inputs)) {
    const data = tensor.data.slice();
    packed[name] = { dtype: tensor.dtype, dims: [...tensor.dims], data };
    buffers.push(data.buffer as ArrayBuffer);
  }
  return { inputs: packed, buffers };
}
