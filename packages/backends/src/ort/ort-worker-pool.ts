import { FlowfleetError } from '@flowfleet/errors';
import type { TensorData, TensorMap } from '@flowfleet/platform';
import type { OrtProvider, OrtSessionSettings } from './session-options.js';
import type { OrtWorkerStats, ProviderProbe } from './worker-protocol.js';
import { WorkerSlot } from './worker-slot.js';

/** How many workers, and the default intra-op threads of their sessions. */
export interface OrtWorkerPoolOptions {
  /** Worker threads (default 1). Each holds its own copy of the sessions and weights it uses. */
  readonly threads?: number;
  /** intraOpNumThreads of each session unless the session says otherwise (default 1). */
  readonly intraOpThreads?: number;
}

/** Options of one session. */
export interface OrtCreateSessionOptions {
  readonly provider?: OrtProvider;
  readonly intraOpThreads?: number;
  /**
   * Keep the model bytes so any worker can build its own copy of the session on demand (a shared
   * eager session: small bytes, many callers). Default false: the session lives in one worker and
   * the bytes are not retained (a captured graph: weights baked in, one user at a time).
   */
  readonly replicate?: boolean;
}

/** Options of one forward. */
export interface OrtRunOptions {
  /** A weight set uploaded with `uploadWeights`, fed as extra inputs (only those the graph takes). */
  readonly weightsId?: string;
  /** Transfer the inputs' buffers to the worker instead of copying; the caller's arrays detach. */
  readonly transferInputs?: boolean;
  readonly signal?: AbortSignal;
}

interface SessionEntry {
  readonly id: string;
  readonly settings: OrtSessionSettings;
  /** Retained only for replicable sessions. */
  readonly model: Uint8Array | undefined;
  /** The one worker of a non-replicable session. */
  readonly home: WorkerSlot | undefined;
}

/**
 * A pool of worker threads that own ONNX Runtime sessions, so forwards never block the event loop
 * (DESIGN.md §3, §8). Sessions are created on request, weight sets stay resident in the workers by
 * id, and outputs come back as transferred ArrayBuffers.
 */
export class OrtWorkerPool {
  private readonly sessions = new Map<string, SessionEntry>();
  private readonly weightSets = new Map<string, ReadonlyMap<string, TensorData>>();
  private nextSessionId = 1;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly slots: WorkerSlot[],
    private readonly intraOpThreads: number,
  ) {}

  /**
   * Starts the workers and waits until each has loaded onnxruntime-node.
   * @throws BACK_ORT_LOAD_FAILED or BACK_ORT_WORKER_EXITED when a worker cannot start.
   */
  static async create(options: OrtWorkerPoolOptions = {}): Promise<OrtWorkerPool> {
    const threads = Math.max(1, Math.floor(options.threads ?? 1));
    const slots: WorkerSlot[] = [];
    const pool = new OrtWorkerPool(slots, Math.max(1, Math.floor(options.intraOpThreads ?? 1)));
    for (let i = 0; i < threads; i++) slots.push(WorkerSlot.spawn(i, pool.onSlotExit));
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
   * Creates a session from ONNX model bytes and returns its id.
   * @throws BACK_ORT_SESSION_FAILED with the runtime's message; BACK_POOL_CLOSED.
   */
  async createSession(model: Uint8Array, options: OrtCreateSessionOptions = {}): Promise<string> {
    this.assertOpen();
    const id = `ort-session-${this.nextSessionId++}`;
    const settings: OrtSessionSettings = {
      provider: options.provider ?? 'cpu',
      intraOpThreads: options.intraOpThreads ?? this.intraOpThreads,
    };
    const slot = this.pickSlot(undefined, (s) => s.sessions.size);
    const entry: SessionEntry = {
      id,
      settings,
      model: options.replicate === true ? model.slice() : undefined,
      home: options.replicate === true ? undefined : slot,
    };
    await this.materialiseSession(slot, entry, model);
    this.sessions.set(id, entry);
    return id;
  }

  /** Releases a session in every worker that holds it; unknown ids are ignored. */
  async releaseSession(sessionId: string): Promise<void> {
    if (!this.sessions.delete(sessionId)) return;
    await Promise.all(
      this.slots.map(async (slot) => {
        if (!slot.sessions.delete(sessionId) || slot.isDead) return;
        await slot.call({ op: 'releaseSession', sessionId });
      }),
    );
  }

  /**
   * Uploads a weight set to the workers once; later runs name it by id. A second upload under
   * the same id is a no-op (ids are unique per content).
   * @throws BACK_ORT_UNSUPPORTED_DTYPE; BACK_POOL_CLOSED.
   */
  async uploadWeights(weightsId: string, tensors: ReadonlyMap<string, TensorData>): Promise<void> {
    this.assertOpen();
    if (!this.weightSets.has(weightsId)) this.weightSets.set(weightsId, tensors);
    try {
      await Promise.all(this.liveSlots().map((slot) => this.materialiseWeights(slot, weightsId)));
    } catch (error) {
      this.weightSets.delete(weightsId);
      throw error;
    }
  }

  /** Drops a weight set from the pool and its workers; unknown ids are ignored. */
  async releaseWeights(weightsId: string): Promise<void> {
    this.weightSets.delete(weightsId);
    await Promise.all(
      this.slots.map(async (slot) => {
        if (!slot.weights.delete(weightsId) || slot.isDead) return;
        await slot.call({ op: 'releaseWeights', weightsId });
      }),
    );
  }

  /**
   * Runs one forward in a worker and returns its outputs (buffers transferred, not copied).
   * @throws BACK_ORT_RUN_FAILED, BACK_ORT_UNKNOWN_SESSION, BACK_ORT_UNKNOWN_WEIGHTS,
   *   BACK_ORT_WORKER_EXITED, BACK_POOL_CLOSED; the signal's reason when aborted.
   */
  async run(
    sessionId: string,
    inputs: TensorMap,
    options: OrtRunOptions = {},
  ): Promise<Record<string, TensorData>> {
    this.assertOpen();
    options.signal?.throwIfAborted();
    const entry = this.sessions.get(sessionId);
    if (entry === undefined) {
      throw new FlowfleetError(
        'BACK_ORT_UNKNOWN_SESSION',
        `no ONNX Runtime session '${sessionId}'`,
        {
          details: { sessionId },
        },
      );
    }
    const { weightsId } = options;
    if (weightsId !== undefined && !this.weightSets.has(weightsId)) {
      throw new FlowfleetError(
        'BACK_ORT_UNKNOWN_WEIGHTS',
        `no uploaded weight set '${weightsId}'`,
        {
          details: { weightsId },
        },
      );
    }
    const slot = this.pickSlot(entry, (s) => s.load);
    slot.reserved += 1;
    let reply: Promise<Record<string, TensorData>>;
    try {
      await this.materialiseSession(slot, entry, entry.model);
      if (weightsId !== undefined) await this.materialiseWeights(slot, weightsId);
      options.signal?.throwIfAborted();
      const transfer = options.transferInputs === true ? bufferList(inputs) : [];
      reply = slot.call(
        { op: 'run', sessionId, inputs, ...(weightsId === undefined ? {} : { weightsId }) },
        transfer,
      );
    } finally {
      slot.reserved -= 1;
    }
    return options.signal === undefined ? reply : abortable(reply, options.signal);
  }

  /** Probes one execution provider in a worker (see `probeExecutionProvider` for the cached form). */
  async probe(provider: OrtProvider): Promise<ProviderProbe> {
    this.assertOpen();
    return this.pickSlot(undefined, (s) => s.load).call<ProviderProbe>({ op: 'probe', provider });
  }

  /** Each live worker's counters. */
  async stats(): Promise<OrtWorkerStats[]> {
    this.assertOpen();
    return Promise.all(this.liveSlots().map((slot) => slot.call<OrtWorkerStats>({ op: 'stats' })));
  }

  /**
   * Fault injection for tests: makes worker `index` call `process.exit(exitCode)`. Its calls in
   * flight reject with BACK_ORT_WORKER_EXITED and the pool starts a replacement worker.
   */
  exitWorkerForTesting(index: number, exitCode = 70): void {
    this.slots[index]?.call({ op: 'exitForTesting', exitCode }).catch(() => undefined);
  }

  /**
   * Terminates every worker (each step runs even if another fails); idempotent. Calls in flight
   * reject with BACK_POOL_CLOSED.
   * @throws BACK_POOL_CLOSE_FAILED listing the steps that failed.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const results = await Promise.allSettled(this.slots.map((slot) => slot.terminate()));
      this.sessions.clear();
      this.weightSets.clear();
      const failures = results.flatMap((r) =>
        r.status === 'rejected' ? [r.reason as unknown] : [],
      );
      if (failures.length > 0) {
        throw new FlowfleetError(
          'BACK_POOL_CLOSE_FAILED',
          `${failures.length} worker(s) failed to stop`,
          {
            cause: new AggregateError(failures),
          },
        );
      }
    })();
    return this.closing;
  }

  private readonly onSlotExit = (slot: WorkerSlot, wasReady: boolean): void => {
    // Replace a worker that was serving; one that never started would only crash-loop.
    if (this.closing !== undefined || !wasReady) return;
    const replacement = WorkerSlot.spawn(slot.index, this.onSlotExit);
    this.slots[slot.index] = replacement;
    // Its failure to start surfaces as BACK_ORT_WORKER_EXITED on the calls routed to it.
    replacement.ready().catch(() => undefined);
  };

  private assertOpen(): void {
    if (this.closing !== undefined) {
      throw new FlowfleetError('BACK_POOL_CLOSED', 'the ONNX Runtime worker pool is closed');
    }
  }

  private liveSlots(): WorkerSlot[] {
    return this.slots.filter((slot) => !slot.isDead);
  }

  /** The worker for a call: a pinned session's home, else the least loaded live worker. */
  private pickSlot(
    entry: SessionEntry | undefined,
    cost: (slot: WorkerSlot) => number,
  ): WorkerSlot {
    if (entry?.home !== undefined) {
      if (entry.home.isDead || this.slots[entry.home.index] !== entry.home) {
        throw new FlowfleetError(
          'BACK_ORT_UNKNOWN_SESSION',
          `ONNX Runtime session '${entry.id}' was lost with worker ${entry.home.index}`,
          { details: { sessionId: entry.id, workerIndex: entry.home.index } },
        );
      }
      return entry.home;
    }
    let best: WorkerSlot | undefined;
    for (const slot of this.liveSlots()) {
      const warm = (s: WorkerSlot) => (entry !== undefined && s.sessions.has(entry.id) ? 0 : 1);
      if (
        best === undefined ||
        cost(slot) < cost(best) ||
        (cost(slot) === cost(best) && warm(slot) < warm(best))
      ) {
        best = slot;
      }
    }
    if (best === undefined) {
      throw new FlowfleetError('BACK_ORT_WORKER_EXITED', 'no ONNX Runtime worker is running');
    }
    return best;
  }

  private materialiseSession(
    slot: WorkerSlot,
    entry: SessionEntry,
    model: Uint8Array | undefined,
  ): Promise<unknown> {
    let created = slot.sessions.get(entry.id);
    if (created === undefined) {
      if (model === undefined)
        throw new Error(`session '${entry.id}' has no model bytes to rebuild from`);
      created = slot.call({
        op: 'createSession',
        sessionId: entry.id,
        model,
        settings: entry.settings,
      });
      slot.sessions.set(entry.id, created);
      created.catch(() => {
        if (slot.sessions.get(entry.id) === created) slot.sessions.delete(entry.id);
      });
    }
    return created;
  }

  private materialiseWeights(slot: WorkerSlot, weightsId: string): Promise<unknown> {
    let uploaded = slot.weights.get(weightsId);
    if (uploaded === undefined) {
      const tensors = this.weightSets.get(weightsId);
      if (tensors === undefined) {
        // Released while this run was being dispatched.
        return Promise.reject(
          new FlowfleetError('BACK_ORT_UNKNOWN_WEIGHTS', `no uploaded weight set '${weightsId}'`, {
            details: { weightsId },
          }),
        );
      }
      uploaded = slot.call({ op: 'uploadWeights', weightsId, tensors });
      slot.weights.set(weightsId, uploaded);
      uploaded.catch(() => {
        if (slot.weights.get(weightsId) === uploaded) slot.weights.delete(weightsId);
      });
    }
    return uploaded;
  }
}

function bufferList(inputs: TensorMap): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const tensor of Object.values(inputs)) {
    const { buffer } = tensor.data;
    if (!(buffer instanceof SharedArrayBuffer)) buffers.add(buffer);
  }
  return [...buffers];
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
