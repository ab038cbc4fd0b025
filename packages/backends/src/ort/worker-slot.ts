import type { Worker } from 'node:worker_threads';
import { FlowfleetError, type ErrorCode } from '@flowfleet/errors';
import { WorkerSlot as ThreadSlot, type WorkerSlotExit } from '@flowfleet/platform';
import { spawnOrtWorker } from './worker-spawn.js';
import type { OrtWorkerFailure, OrtWorkerOp, OrtWorkerRequest } from './worker-protocol.js';

/** A request as the pool writes it: the slot adds the call id. */
export type SlotRequest = OrtWorkerRequest extends infer R
  ? R extends OrtWorkerRequest
    ? Omit<R, 'id'>
    : never
  : never;

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
 * with its id, see platform's `WorkerSlot`), and which sessions and weight sets have been
 * materialised in it. A worker that exits rejects every call in flight with
 * BACK_ORT_WORKER_EXITED (BACK_POOL_CLOSED when the pool terminated it).
 */
export class WorkerSlot {
  /** Session ids created in this worker → the creation call (awaited before a run uses it). */
  readonly sessions = new Map<string, Promise<unknown>>();
  /** Weight-set ids uploaded to this worker → the upload call. */
  readonly weights = new Map<string, Promise<unknown>>();
  /** Dispatch decisions not yet turned into calls (counted as load so concurrent picks spread). */
  reserved = 0;

  private readonly thread: ThreadSlot<SlotRequest, OrtWorkerFailure>;

  private constructor(
    readonly index: number,
    worker: Worker,
    onExit: SlotExitListener,
  ) {
    this.thread = new ThreadSlot<SlotRequest, OrtWorkerFailure>({
      index,
      worker,
      failureError: (failure, op) => failureError(index, failure, op),
      exitError,
      startError: (message) =>
        new FlowfleetError('BACK_ORT_LOAD_FAILED', message, { details: { workerIndex: index } }),
      onExit: (wasReady) => onExit(this, wasReady),
    });
  }

  /** Spawns the worker thread for slot `index`. */
  static spawn(index: number, onExit: SlotExitListener): WorkerSlot {
    return new WorkerSlot(index, spawnOrtWorker({ workerIndex: index }), onExit);
  }

  /** Resolves once the worker has loaded onnxruntime-node. */
  ready(): Promise<void> {
    return this.thread.ready();
  }

  get isDead(): boolean {
    return this.thread.isDead;
  }

  /** Calls in flight plus dispatches reserved for it. */
  get load(): number {
    return this.thread.inFlight + this.reserved;
  }

  /**
   * Sends one request and resolves with the worker's reply value.
   * @throws the coded error matching the worker's failure kind, BACK_ORT_WORKER_EXITED if the
   *   worker dies first, BACK_POOL_CLOSED if the pool terminates it.
   */
  call<T>(request: SlotRequest, transfer: readonly ArrayBuffer[] = []): Promise<T> {
    return this.thread.call<T>(request, transfer);
  }

  /** Stops the worker; calls in flight reject with BACK_POOL_CLOSED. */
  terminate(): Promise<void> {
    return this.thread.terminate();
  }
}

function failureError(index: number, failure: OrtWorkerFailure, op: OrtWorkerOp): FlowfleetError {
  const { kind, message: reason } = failure;
  return new FlowfleetError(FAILURE_CODES[kind], `ONNX Runtime ${op} failed: ${reason}`, {
    details: { workerIndex: index, op },
    cause: new Error(reason),
  });
}

function exitError({ index, terminated, exitCode, lastError }: WorkerSlotExit): FlowfleetError {
  if (terminated) {
    return new FlowfleetError('BACK_POOL_CLOSED', 'the ONNX Runtime worker pool was closed', {
      details: { workerIndex: index },
    });
  }
  const why = lastError === undefined ? '' : `: ${lastError}`;
  return new FlowfleetError(
    'BACK_ORT_WORKER_EXITED',
    `ONNX Runtime worker ${index} exited${exitCode === undefined ? '' : ` with code ${exitCode}`}${why}`,
    { details: { workerIndex: index, ...(exitCode === undefined ? {} : { exitCode }) } },
  );
}
