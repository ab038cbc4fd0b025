import { ERROR_CODES, FlowfleetError, type ErrorCode } from '@flowfleet/errors';
import type { ComputeFailure, ComputeRequest } from './compute-protocol.js';
import { moduleWorkerUrl, spawnModuleWorker } from './spawn-module-worker.js';
import { WorkerSlot, type WorkerSlotExit } from './worker-slot.js';

/** Tells the pool that a thread is gone and whether it had been serving. */
export type ComputeThreadExitListener = (thread: ComputeThread, wasReady: boolean) => void;

function isErrorCode(code: string | undefined): code is ErrorCode {
  return code !== undefined && Object.hasOwn(ERROR_CODES, code);
}

/**
 * One thread of a `ComputePool` as its callers see it: calls in flight (see `WorkerSlot`), what
 * has been made resident in it (weight sets, sessions, captures: keyed promises, so concurrent
 * callers share one upload), and dispatches reserved for it. A thread that exits rejects every
 * call in flight with PLAT_COMPUTE_THREAD_EXITED (PLAT_COMPUTE_POOL_CLOSED after `close()`), and
 * everything resident in it is gone with it: its replacement is a new `ComputeThread`.
 */
export class ComputeThread {
  readonly #slot: WorkerSlot<ComputeRequest, ComputeFailure>;
  readonly #residents = new Map<string, Promise<unknown>>();
  #reserved = 0;

  private constructor(
    readonly index: number,
    onExit: ComputeThreadExitListener,
    name: string,
  ) {
    const worker = spawnModuleWorker(moduleWorkerUrl(import.meta.url, 'compute-thread'), {
      workerData: { threadIndex: index },
      name: `${name}-${index}`,
    });
    this.#slot = new WorkerSlot<ComputeRequest, ComputeFailure>({
      index,
      worker,
      failureError: (failure) => failureError(index, failure),
      exitError,
      startError: (message) =>
        new FlowfleetError('PLAT_COMPUTE_THREAD_EXITED', message, {
          details: { threadIndex: index },
        }),
      onExit: (wasReady) => onExit(this, wasReady),
      unrefWhenIdle: true,
    });
  }

  /** Spawns thread `index`; `ready()` resolves once it runs. */
  static spawn(index: number, onExit: ComputeThreadExitListener, name: string): ComputeThread {
    return new ComputeThread(index, onExit, name);
  }

  /** Resolves once the thread runs; rejects PLAT_COMPUTE_THREAD_EXITED if it dies first. */
  ready(): Promise<void> {
    return this.#slot.ready();
  }

  get isDead(): boolean {
    return this.#slot.isDead;
  }

  /** Calls in flight plus dispatches reserved for it (so concurrent picks spread). */
  get load(): number {
    return this.#slot.inFlight + this.#reserved;
  }

  /**
   * Calls `method` of handler `handler` in this thread (buffers in `transfer` are moved).
   * @throws the handler's FlowfleetError (same code and details), INTERNAL_ERROR for an uncoded
   *   one, PLAT_COMPUTE_HANDLER_FAILED for a handler not loaded here,
   *   PLAT_COMPUTE_THREAD_EXITED, PLAT_COMPUTE_POOL_CLOSED.
   */
  call<T>(
    handler: string,
    method: string,
    payload: unknown,
    transfer: readonly ArrayBuffer[] = [],
  ): Promise<T> {
    return this.#slot.call<T>({ op: 'call', handler, method, payload }, transfer);
  }

  /** A pool-level request (load, uploads, stats); the pool's own channel. */
  request<T>(request: ComputeRequest, transfer: readonly ArrayBuffer[] = []): Promise<T> {
    return this.#slot.call<T>(request, transfer);
  }

  /**
   * The resident thing named `key` in this thread, made once by `make` (concurrent callers share
   * the promise). A failed `make` is forgotten, so the next caller tries again.
   */
  resident<T>(key: string, make: () => Promise<T>): Promise<T> {
    let made = this.#residents.get(key) as Promise<T> | undefined;
    if (made === undefined) {
      const creating = make();
      made = creating;
      this.#residents.set(key, creating);
      creating.catch(() => {
        if (this.#residents.get(key) === creating) this.#residents.delete(key);
      });
    }
    return made;
  }

  /** The promise `resident(key, …)` holds now, if any (to see whether it was replaced). */
  residentPromise(key: string): Promise<unknown> | undefined {
    return this.#residents.get(key);
  }

  /** True when `key` is resident (or being made) here. */
  hasResident(key: string): boolean {
    return this.#residents.has(key);
  }

  /** How many residents have keys starting with `prefix` (for the pool's placement choices). */
  countResidents(prefix: string): number {
    let n = 0;
    for (const key of this.#residents.keys()) if (key.startsWith(prefix)) n += 1;
    return n;
  }

  /** Forgets `key`; true when it was resident (so the caller releases it in the thread). */
  dropResident(key: string): boolean {
    return this.#residents.delete(key);
  }

  /** Counts a dispatch as load until `done` settles (its prepare steps, before the call). */
  async reserving<T>(done: () => Promise<T>): Promise<T> {
    this.#reserved += 1;
    try {
      return await done();
    } finally {
      this.#reserved -= 1;
    }
  }

  /** Stops the thread; calls in flight reject with PLAT_COMPUTE_POOL_CLOSED. Idempotent. */
  terminate(): Promise<void> {
    return this.#slot.terminate();
  }
}

function failureError(index: number, failure: ComputeFailure): FlowfleetError {
  if (isErrorCode(failure.code)) {
    const details = (failure.details ?? {}) as Readonly<Record<string, unknown>>;
    return new FlowfleetError(failure.code, failure.message, {
      details,
      cause: new Error(failure.message),
    });
  }
  return new FlowfleetError(
    'INTERNAL_ERROR',
    `compute thread ${index}: ${failure.where} failed: ${failure.message}`,
    { details: { threadIndex: index, where: failure.where }, cause: new Error(failure.message) },
  );
}

function exitError({ index, terminated, exitCode, lastError }: WorkerSlotExit): FlowfleetError {
  if (terminated) {
    return new FlowfleetError('PLAT_COMPUTE_POOL_CLOSED', 'the compute pool was closed', {
      details: { threadIndex: index },
    });
  }
  const why = lastError === undefined ? '' : `: ${lastError}`;
  return new FlowfleetError(
    'PLAT_COMPUTE_THREAD_EXITED',
    `compute thread ${index} exited${exitCode === undefined ? '' : ` with code ${exitCode}`}${why}`,
    { details: { threadIndex: index, ...(exitCode === undefined ? {} : { exitCode }) } },
  );
}
