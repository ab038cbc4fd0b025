import type { Worker } from 'node:worker_threads';
import { ERROR_CODES, FlowfleetError, type ErrorCode } from '@flowfleet/errors';
import { moduleWorkerUrl, spawnModuleWorker } from '@flowfleet/platform';
import type {
  ReferenceWorkerFailure,
  ReferenceWorkerMessage,
  ReferenceWorkerOp,
  ReferenceWorkerRequest,
} from './reference-worker-protocol.js';

/** A request as the pool writes it: the slot adds the call id. */
export type ReferenceSlotRequest = ReferenceWorkerRequest extends infer R
  ? R extends ReferenceWorkerRequest
    ? Omit<R, 'id'>
    : never
  : never;

interface PendingCall {
  readonly op: ReferenceWorkerOp;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** Tells the pool that a slot's worker is gone and whether it had been serving. */
export type ReferenceSlotExitListener = (slot: ReferenceWorkerSlot, wasReady: boolean) => void;

function isErrorCode(code: string | undefined): code is ErrorCode {
  return code !== undefined && Object.hasOwn(ERROR_CODES, code);
}

/**
 * One reference worker thread and its bookkeeping: calls in flight (each answered by the reply
 * with its id) and what has been materialised in it (weight sets, captures, workspaces). A worker
 * that exits rejects every call in flight with MODEL_REFERENCE_WORKER_EXITED
 * (MODEL_REFERENCE_POOL_CLOSED when the pool terminated it). The thread is unref'd while idle, so
 * an idle pool never keeps a process alive.
 */
export class ReferenceWorkerSlot {
  /** Weight-set ids uploaded to this worker → the upload call. */
  readonly weights = new Map<string, Promise<unknown>>();
  /** Capture ids materialised in this worker → the capture call. */
  readonly captures = new Map<string, Promise<unknown>>();
  /** Workspace keys (components) that ran here. */
  readonly workspaces = new Set<string>();
  /** Dispatch decisions not yet turned into calls (counted as load so concurrent picks spread). */
  reserved = 0;

  private readonly pending = new Map<number, PendingCall>();
  private nextCallId = 1;
  private state: 'starting' | 'ready' | 'dead' = 'starting';
  private terminating = false;
  private lastError: string | undefined;
  private exitCode: number | undefined;
  private readonly readyPromise: Promise<void>;

  private constructor(
    readonly index: number,
    private readonly worker: Worker,
    onExit: ReferenceSlotExitListener,
  ) {
    this.readyPromise = new Promise<void>((resolve, reject) => {
      worker.on('message', (message: ReferenceWorkerMessage) => {
        if (message.type === 'ready') {
          this.state = 'ready';
          this.updateRef();
          resolve();
        } else this.settle(message);
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
        if (!this.terminating) onExit(this, wasReady);
      });
    });
    // A start failure is reported through ready(); never leave it unhandled.
    this.readyPromise.catch(() => undefined);
  }

  /** Spawns the worker thread for slot `index`. */
  static spawn(index: number, onExit: ReferenceSlotExitListener): ReferenceWorkerSlot {
    const worker = spawnModuleWorker(moduleWorkerUrl(import.meta.url, 'reference-worker'), {
      workerData: { workerIndex: index },
      name: `reference-worker-${index}`,
    });
    return new ReferenceWorkerSlot(index, worker, onExit);
  }

  /** Resolves once the worker has loaded the reference forward. */
  ready(): Promise<void> {
    return this.readyPromise;
  }

  get isDead(): boolean {
    return this.state === 'dead';
  }

  /** Calls in flight plus dispatches reserved for it. */
  get load(): number {
    return this.pending.size + this.reserved;
  }

  /**
   * Sends one request and resolves with the worker's reply value.
   * @throws the FlowfleetError the worker raised (same code and details), INTERNAL_ERROR for an
   *   uncoded failure, MODEL_REFERENCE_WORKER_EXITED if the worker dies first,
   *   MODEL_REFERENCE_POOL_CLOSED if the pool terminates it.
   */
  call<T>(request: ReferenceSlotRequest, transfer: readonly ArrayBuffer[] = []): Promise<T> {
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

  /** Stops the worker; calls in flight reject with MODEL_REFERENCE_POOL_CLOSED. */
  async terminate(): Promise<void> {
    this.terminating = true;
    if (this.state !== 'dead') await this.worker.terminate();
  }

  /** Keep the process alive while the worker starts or has calls in flight, not while idle. */
  private updateRef(): void {
    if (this.state === 'dead') return;
    if (this.state === 'starting' || this.pending.size > 0) this.worker.ref();
    else this.worker.unref();
  }

  private settle(message: Extract<ReferenceWorkerMessage, { type: 'reply' }>): void {
    const call = this.pending.get(message.id);
    if (call === undefined) return;
    this.pending.delete(message.id);
    this.updateRef();
    if (message.ok) call.resolve(message.value);
    else call.reject(this.failureError(call.op, message.failure));
  }

  private failureError(op: ReferenceWorkerOp, failure: ReferenceWorkerFailure): FlowfleetError {
    if (isErrorCode(failure.code)) {
      const details = (failure.details ?? {}) as Readonly<Record<string, unknown>>;
      return new FlowfleetError(failure.code, failure.message, { details });
    }
    return new FlowfleetError(
      'INTERNAL_ERROR',
      `reference worker ${op} failed: ${failure.message}`,
      {
        details: { workerIndex: this.index, op },
        cause: new Error(failure.message),
      },
    );
  }

  private exitError(): FlowfleetError {
    const { exitCode } = this;
    if (this.terminating) {
      return new FlowfleetError(
        'MODEL_REFERENCE_POOL_CLOSED',
        'the reference worker pool was closed',
        {
          details: { workerIndex: this.index },
        },
      );
    }
    const why = this.lastError === undefined ? '' : `: ${this.lastError}`;
    return new FlowfleetError(
      'MODEL_REFERENCE_WORKER_EXITED',
      `reference worker ${this.index} exited${exitCode === undefined ? '' : ` with code ${exitCode}`}${why}`,
      { details: { workerIndex: this.index, ...(exitCode === undefined ? {} : { exitCode }) } },
    );
  }
}
