import type { Worker } from 'node:worker_threads';
import { FlowfleetError, type ErrorCode } from '@flowfleet/errors';
import { spawnOrtWorker } from './worker-spawn.js';
import type {
  OrtWorkerFailure,
  OrtWorkerMessage,
  OrtWorkerOp,
  OrtWorkerRequest,
} from './worker-protocol.js';

/** A request as the pool writes it: the slot adds the call id. */
export type SlotRequest = OrtWorkerRequest extends infer R
  ? R extends OrtWorkerRequest
    ? Omit<R, 'id'>
    : never
  : never;

interface PendingCall {
  readonly op: OrtWorkerOp;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

const FAILURE_CODES: Readonly<Record<OrtWorkerFailure['kind'], ErrorCode>> = {
  session: 'BACK_ORT_SESSION_FAILED',
  run: 'BACK_ORT_RUN_FAILED',
  unknownSession: 'BACK_ORT_UNKNOWN_SESSION',
  unknownWeights: 'BACK_ORT_UNKNOWN_WEIGHTS',
  dtype: 'BACK_ORT_UNSUPPORTED_DTYPE',
  load: 'BACK_ORT_LOAD_FAILED',
};

/** Tells the pool that a slot's worker is gone and whether it had been serving. */
export type SlotExitListener = (slot: WorkerSlot, wasReady: boolean) => void;

/**
 * One worker thread of the pool and its bookkeeping: calls in flight (each answered by the reply
 * with its id), and which sessions and weight sets have been materialised in it. A worker that
 * exits rejects every call in flight with BACK_ORT_WORKER_EXITED (BACK_POOL_CLOSED when the pool
 * terminated it).
 */
export class WorkerSlot {
  /** Session ids created in this worker → the creation call (awaited before a run uses it). */
  readonly sessions = new Map<string, Promise<unknown>>();
  /** Weight-set ids uploaded to this worker → the upload call. */
  readonly weights = new Map<string, Promise<unknown>>();
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
    onExit: SlotExitListener,
  ) {
    this.readyPromise = new Promise<void>((resolve, reject) => {
      worker.on('message', (message: OrtWorkerMessage) => {
        if (message.type === 'ready') {
          this.state = 'ready';
          resolve();
        } else if (message.type === 'startFailed') {
          reject(
            new FlowfleetError('BACK_ORT_LOAD_FAILED', message.message, {
              details: { workerIndex: index },
            }),
          );
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
        if (!this.terminating) onExit(this, wasReady);
      });
    });
    // A start failure is reported through ready(); never leave it unhandled.
    this.readyPromise.catch(() => undefined);
  }

  /** Spawns the worker thread for slot `index`. */
  static spawn(index: number, onExit: SlotExitListener): WorkerSlot {
    return new WorkerSlot(index, spawnOrtWorker({ workerIndex: index }), onExit);
  }

  /** Resolves once the worker has loaded onnxruntime-node. */
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
   * @throws the coded error matching the worker's failure kind, BACK_ORT_WORKER_EXITED if the
   *   worker dies first, BACK_POOL_CLOSED if the pool terminates it.
   */
  call<T>(request: SlotRequest, transfer: readonly ArrayBuffer[] = []): Promise<T> {
    if (this.state === 'dead') return Promise.reject(this.exitError());
    const id = this.nextCallId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, {
        op: request.op,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      this.worker.postMessage({ ...request, id }, [...transfer]);
    });
  }

  /** Stops the worker; calls in flight reject with BACK_POOL_CLOSED. */
  async terminate(): Promise<void> {
    this.terminating = true;
    if (this.state !== 'dead') await this.worker.terminate();
  }

  private settle(message: Extract<OrtWorkerMessage, { type: 'reply' }>): void {
    const call = this.pending.get(message.id);
    if (call === undefined) return;
    this.pending.delete(message.id);
    if (message.ok) {
      call.resolve(message.value);
      return;
    }
    const { kind, message: reason } = message.failure;
    call.reject(
      new FlowfleetError(FAILURE_CODES[kind], `ONNX Runtime ${call.op} failed: ${reason}`, {
        details: { workerIndex: this.index, op: call.op },
        cause: new Error(reason),
      }),
    );
  }

  private exitError(): FlowfleetError {
    const { exitCode } = this;
    if (this.terminating) {
      return new FlowfleetError('BACK_POOL_CLOSED', 'the ONNX Runtime worker pool was closed', {
        details: { workerIndex: this.index },
      });
    }
    const why = this.lastError === undefined ? '' : `: ${this.lastError}`;
    return new FlowfleetError(
      'BACK_ORT_WORKER_EXITED',
      `ONNX Runtime worker ${this.index} exited${exitCode === undefined ? '' : ` with code ${exitCode}`}${why}`,
      { details: { workerIndex: this.index, ...(exitCode === undefined ? {} : { exitCode }) } },
    );
  }
}
