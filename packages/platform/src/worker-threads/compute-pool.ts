import { FlowfleetError } from '@flowfleet/errors';
import type { WeightSet } from '../component-types.js';
import { ComputeThread } from './compute-thread-handle.js';
import type { ComputeThreadStats } from './compute-protocol.js';

/** Options of `ComputePool.create`. */
export interface ComputePoolOptions {
  /**
   * Worker threads (default 1). Each holds its own resident state; shared weight tensors are one
   * copy for the process (see `ensureWeights`).
   */
  readonly threads?: number;
  /** Thread name prefix shown in diagnostics (default `flowfleet-compute`). */
  readonly name?: string;
}

/** A handler module the pool loads into every thread (and into every replacement thread). */
export interface ComputeHandlerModule {
  /** The id calls name it by (`ort`, `reference`). */
  readonly id: string;
  /** The module, which exports `createComputeHandler` (see `moduleWorkerUrl`). */
  readonly url: URL;
  /** Passed to its factory in each thread (structured-cloned). */
  readonly options?: unknown;
}

/** What `dispatch` makes resident in the thread before it sends the call. */
export interface DispatchOptions {
  /** A weight set the call reads (`context.weights(id)` in the thread). */
  readonly weights?: WeightSet;
  /** The caller's own resident state (a session, a capture), made before the weights. */
  readonly prepare?: () => Promise<unknown>;
}

const WEIGHTS = 'weights:';
const HANDLER = 'handler:';

/**
 * The one compute thread pool of a process (DESIGN.md §1, §3): N worker threads that run
 * forwards off the event loop. Backends plug in as handler modules (`load`); weight sets are
 * uploaded once per thread and cached by id; a caller may route a call to the least loaded thread
 * or to a specific one (where its session or capture lives); call tensors cross as transferred
 * ArrayBuffers, weight tensors in SharedArrayBuffers are shared (`sharedTensor`). A thread that crashes fails its calls in flight with PLAT_COMPUTE_THREAD_EXITED
 * and is replaced (with every loaded handler, and nothing else resident). The owner creates it,
 * hands it to whatever builds components, and closes it after the components are disposed.
 */
export class ComputePool {
  readonly #threads: ComputeThread[] = [];
  readonly #handlers = new Map<string, ComputeHandlerModule>();
  readonly #name: string;
  #closing: Promise<void> | undefined;

  private constructor(name: string) {
    this.#name = name;
  }

  /**
   * Starts the threads and waits until each runs.
   * @throws PLAT_COMPUTE_THREAD_EXITED when a thread cannot start.
   */
  static async create(options: ComputePoolOptions = {}): Promise<ComputePool> {
    const pool = new ComputePool(options.name ?? 'flowfleet-compute');
    const threads = Math.max(1, Math.floor(options.threads ?? 1));
    for (let i = 0; i < threads; i++) pool.#threads.push(pool.#spawn(i));
    try {
      await Promise.all(pool.#threads.map((thread) => thread.ready()));
    } catch (error) {
      await pool.close().catch(() => undefined);
      throw error;
    }
    return pool;
  }

  /** Number of threads. */
  get size(): number {
    return this.#threads.length;
  }

  get isClosed(): boolean {
    return this.#closing !== undefined;
  }

  /**
   * Loads a handler module into every thread (idempotent per id); replacement threads load it
   * too. Resolves once every live thread has run its factory.
   * @throws PLAT_COMPUTE_HANDLER_FAILED, or the factory's own coded error (e.g. a backend that
   *   cannot load its runtime); PLAT_COMPUTE_POOL_CLOSED.
   */
  async load(module: ComputeHandlerModule): Promise<void> {
    this.#assertOpen();
    const known = this.#handlers.get(module.id);
    if (known !== undefined && known.url.href !== module.url.href) {
      throw new FlowfleetError(
        'PLAT_COMPUTE_HANDLER_FAILED',
        `compute handler '${module.id}' is already loaded from ${known.url.href}`,
        { details: { handler: module.id, url: module.url.href } },
      );
    }
    this.#handlers.set(module.id, module);
    try {
      await Promise.all(this.#live().map((thread) => this.#loadInto(thread, module)));
    } catch (error) {
      if (known === undefined) this.#handlers.delete(module.id);
      throw error;
    }
  }

  /** The live threads, in index order. */
  threads(): readonly ComputeThread[] {
    return this.#live();
  }

  /**
   * The least loaded live thread; ties go to the lower `warmth` (e.g. 0 where the weights or
   * session are already resident).
   * @throws PLAT_COMPUTE_THREAD_EXITED when no thread runs; PLAT_COMPUTE_POOL_CLOSED.
   */
  pick(warmth: (thread: ComputeThread) => number = () => 0): ComputeThread {
    this.#assertOpen();
    let best: ComputeThread | undefined;
    for (const thread of this.#live()) {
      if (
        best === undefined ||
        thread.load < best.load ||
        (thread.load === best.load && warmth(thread) < warmth(best))
      ) {
        best = thread;
      }
    }
    if (best === undefined) {
      throw new FlowfleetError('PLAT_COMPUTE_THREAD_EXITED', 'no compute thread is running');
    }
    return best;
  }

  /** True while `thread` is alive and still this pool's thread at its index (not replaced). */
  isCurrent(thread: ComputeThread): boolean {
    return !thread.isDead && this.#threads[thread.index] === thread;
  }

  /**
   * Makes a weight set resident in `thread` (one upload per id and thread). Tensors whose values
   * are SharedArrayBuffers (`sharedTensor`: every weight version a worker materialises) are
   * shared, not copied — the thread reads the caller's memory, which must not change while the
   * set is resident; tensors over ordinary buffers are structured-cloned (a copy per thread, the
   * caller keeps its arrays). Returns the shared upload promise.
   */
  ensureWeights(thread: ComputeThread, weights: WeightSet): Promise<unknown> {
    return thread.resident(`${WEIGHTS}${weights.id}`, () =>
      thread.request({ op: 'uploadWeights', weightsId: weights.id, tensors: weights.tensors }),
    );
  }

  /** True when the weight set is resident (or being uploaded) in `thread`. */
  hasWeights(thread: ComputeThread, weightsId: string): boolean {
    return thread.hasResident(`${WEIGHTS}${weightsId}`);
  }

  /** Uploads a weight set to every live thread now (instead of on first use in each). */
  async uploadWeights(weights: WeightSet): Promise<void> {
    this.#assertOpen();
    await Promise.all(this.#live().map((thread) => this.ensureWeights(thread, weights)));
  }

  /** Drops a weight set from every thread; unknown ids are ignored. */
  releaseWeights(weightsId: string): Promise<void> {
    return this.forget(`${WEIGHTS}${weightsId}`, (thread) =>
      thread.request({ op: 'releaseWeights', weightsId }),
    );
  }

  /**
   * Sends a call once its thread holds what it needs: `prepare` (the caller's resident state),
   * then the weights, again if they were released meanwhile; `send` runs in the same tick as that
   * last check, so a release issued later reaches the thread after the call. The thread counts
   * the dispatch as load while it prepares.
   * @throws whatever `prepare`, the upload or `send` throws; PLAT_COMPUTE_POOL_CLOSED.
   */
  async dispatch<T>(
    thread: ComputeThread,
    options: DispatchOptions,
    send: () => Promise<T>,
  ): Promise<T> {
    this.#assertOpen();
    const { weights } = options;
    let reply: Promise<T> | undefined;
    await thread.reserving(async () => {
      for (;;) {
        await options.prepare?.();
        if (weights === undefined) break;
        const uploaded = this.ensureWeights(thread, weights);
        await uploaded;
        if (thread.residentPromise(`${WEIGHTS}${weights.id}`) === uploaded) break;
      }
      this.#assertOpen();
      reply = send();
    });
    return reply as Promise<T>;
  }

  /**
   * Forgets resident `key` in every thread and runs `release` in each live thread that held it
   * (every thread is tried even if one fails; the first failure is rethrown).
   */
  async forget(key: string, release: (thread: ComputeThread) => Promise<unknown>): Promise<void> {
    const held = this.#threads.filter((thread) => thread.dropResident(key) && !thread.isDead);
    const results = await Promise.allSettled(held.map(release));
    const failed = results.find((r) => r.status === 'rejected');
    if (failed !== undefined && !this.isClosed) throw failed.reason;
  }

  /** Each live thread's counters. @throws PLAT_COMPUTE_POOL_CLOSED */
  async stats(): Promise<ComputeThreadStats[]> {
    this.#assertOpen();
    return Promise.all(
      this.#live().map((thread) => thread.request<ComputeThreadStats>({ op: 'stats' })),
    );
  }

  /**
   * Fault injection for tests: makes thread `index` call `process.exit(exitCode)` on arrival of
   * this request. Its calls in flight reject with PLAT_COMPUTE_THREAD_EXITED and the pool starts
   * a replacement.
   */
  exitThreadForTesting(index: number, exitCode = 70): void {
    this.#threads[index]?.request({ op: 'exitForTesting', exitCode }).catch(() => undefined);
  }

  /**
   * Terminates every thread (each step runs even if another fails); idempotent. Calls in flight
   * reject with PLAT_COMPUTE_POOL_CLOSED.
   * @throws PLAT_COMPUTE_POOL_CLOSE_FAILED listing the threads that failed to stop.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const results = await Promise.allSettled(this.#threads.map((thread) => thread.terminate()));
      const failures = results.flatMap((r) =>
        r.status === 'rejected' ? [r.reason as unknown] : [],
      );
      if (failures.length > 0) {
        throw new FlowfleetError(
          'PLAT_COMPUTE_POOL_CLOSE_FAILED',
          `${failures.length} compute thread(s) failed to stop`,
          { cause: new AggregateError(failures) },
        );
      }
    })();
    return this.#closing;
  }

  #spawn(index: number): ComputeThread {
    return ComputeThread.spawn(index, this.#onThreadExit, this.#name);
  }

  readonly #onThreadExit = (thread: ComputeThread, wasReady: boolean): void => {
    // Replace a thread that was serving; one that never started would only crash-loop.
    if (this.#closing !== undefined || !wasReady) return;
    const replacement = this.#spawn(thread.index);
    this.#threads[thread.index] = replacement;
    // Its failure to start surfaces as PLAT_COMPUTE_THREAD_EXITED on the calls routed to it;
    // a handler that fails to load there, as PLAT_COMPUTE_HANDLER_FAILED on calls naming it.
    replacement.ready().catch(() => undefined);
    for (const module of this.#handlers.values()) {
      this.#loadInto(replacement, module).catch(() => undefined);
    }
  };

  #loadInto(thread: ComputeThread, module: ComputeHandlerModule): Promise<unknown> {
    return thread.resident(`${HANDLER}${module.id}`, () =>
      thread.request({
        op: 'load',
        handler: module.id,
        url: module.url.href,
        options: module.options ?? null,
      }),
    );
  }

  #live(): ComputeThread[] {
    return this.#threads.filter((thread) => !thread.isDead);
  }

  #assertOpen(): void {
    if (this.#closing !== undefined) {
      throw new FlowfleetError('PLAT_COMPUTE_POOL_CLOSED', 'the compute pool is closed');
    }
  }
}
