import type { Worker } from 'node:worker_threads';

/** A request as a pool writes it: the slot adds the call id. */
export interface WorkerSlotRequest {
  readonly op: string;
}

/** What a slot's worker sends back: its start outcome, then one reply per request id. */
export type WorkerSlotMessage<TFailure> =
  | { readonly type: 'ready' }
  | { readonly type: 'startFailed'; readonly message: string }
  | { readonly type: 'reply'; readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly type: 'reply'; readonly id: number; readonly ok: false; readonly failure: TFailure };

/** How a slot's worker ended, for the pool to turn into its own coded error. */
export interface WorkerSlotExit {
  readonly index: number;
  /** True when the pool terminated the worker (close), false when it died on its own. */
  readonly terminated: boolean;
  readonly exitCode: number | undefined;
  /** The message of the last uncaught error the worker reported, if any. */
  readonly lastError: string | undefined;
}

/** Options of `WorkerSlot`: the worker and how the pool names its failures. */
export interface WorkerSlotOptions<TRequest extends WorkerSlotRequest, TFailure> {
  readonly index: number;
  readonly worker: Worker;
  /** The error a call rejects with when the worker answers it with a failure. */
  readonly failureError: (failure: TFailure, op: TRequest['op']) => Error;
  /** The error calls in flight (and later calls) reject with once the worker is gone. */
  readonly exitError: (exit: WorkerSlotExit) => Error;
  /** The error `ready()` rejects with when the worker reports `startFailed`. */
  readonly startError?: (message: string) => Error;
  /** Called once when the worker exits on its own (not after `terminate()`). */
  readonly onExit: (wasReady: boolean) => void;
  /** Unref the thread while it has no calls in flight, so an idle pool never keeps a process alive. */
  readonly unrefWhenIdle?: boolean;
}

interface PendingCall<TOp> {
  readonly op: TOp;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * One worker thread of a pool and its request/reply bookkeeping: each call gets an id and is
 * settled by the reply with that id; a worker that exits rejects every call in flight with the
 * pool's exit error.
 */
export class WorkerSlot<TRequest extends WorkerSlotRequest, TFailure> {
  readonly index: number;
  private readonly worker: Worker;
  private readonly options: WorkerSlotOptions<TRequest, TFailure>;
  private readonly pending = new Map<number, PendingCall<TRequest['op']>>();
  private nextCallId = 1;
  private state: 'starting' | 'ready' | 'dead' = 'starting';
  private terminating = false;
  private lastError: string | undefined;
  private exitCode: number | undefined;
  private readonly readyPromise: Promise<void>;

  constructor(options: WorkerSlotOptions<TRequest, TFailure>) {
    this.index = options.index;
    this.worker = options.worker;
    this.options = options;
    const { worker } = options;
    this.readyPromise = new Promise<void>((resolve, reject) => {
      worker.on('message', (message: WorkerSlotMessage<TFailure>) => {
        if (message.type === 'ready') {
          this.state = 'ready';
          this.updateRef();
          resolve();
        } else if (message.type === 'startFailed') {
          reject(options.startError?.(message.message) ?? new Error(message.message));
        } else {
          this.settle(message);
        }
      });
      worker.on('error', (error) => {
        this.lastError = error.message;
      });
      worker.on('exit', (exitCode) => {
        const wasReady = this.state === 'ready';
        this.state = 'dead';
        this.exitCode = exitCode;
        const error = this.exitError();
        reject(error);
        for (const call of this.pending.values()) call.reject(error);
        this.pending.clear();
        if (!this.terminating) options.onExit(wasReady);
      });
    });
    // A start failure is reported through ready(); never leave it unhandled.
    this.readyPromise.catch(() => undefined);
  }

  /** Resolves once the worker reports `ready`; rejects if it fails to start or exits first. */
  ready(): Promise<void> {
    return this.readyPromise;
  }

  get isDead(): boolean {
    return this.state === 'dead';
  }

  /** Calls sent and not yet answered. */
  get inFlight(): number {
    return this.pending.size;
  }

  /**
   * Sends one request (buffers in `transfer` are moved, not copied) and resolves with the
   * worker's reply value.
   * @throws the pool's failure error for a failed reply; its exit error if the worker is gone.
   */
  call<T>(request: TRequest, transfer: readonly ArrayBuffer[] = []): Promise<T> {
    if (this.state === 'dead') return Promise.reject(this.exitError());
    const id = this.nextCallId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, {
        op: request.op,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      this.updateRef();
      this.worker.postMessage({ ...request, id }, [...transfer]);
    });
  }

  /** Stops the worker; calls in flight reject with the exit error (`terminated: true`). */
  async terminate(): Promise<void> {
    this.terminating = true;
    if (this.state !== 'dead') await this.worker.terminate();
  }

  /** Keep the process alive while the worker starts or has calls in flight, not while idle. */
  private updateRef(): void {
    if (this.options.unrefWhenIdle !== true || this.state === 'dead') return;
    if (this.state === 'starting' || this.pending.size > 0) this.worker.ref();
    else this.worker.unref();
  }

  private settle(message: Extract<WorkerSlotMessage<TFailure>, { type: 'reply' }>): void {
    const call = this.pending.get(message.id);
    if (call === undefined) return;
    this.pending.delete(message.id);
    this.updateRef();
    if (message.ok) call.resolve(message.value);
    else call.reject(this.options.failureError(message.failure, call.op));
  }

  private exitError(): Error {
    return this.options.exitError({
      index: this.index,
      terminated: this.terminating,
      exitCode: this.exitCode,
      lastError: this.lastError,
    });
  }
}
