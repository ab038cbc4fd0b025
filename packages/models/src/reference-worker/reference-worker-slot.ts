import type { Worker } from 'node:worker_threads';
import { ERROR_CODES, FlowfleetError, type ErrorCode } from '@flowfleet/errors';
import {
  moduleWorkerUrl,
  spawnModuleWorker,
  WorkerSlot,
  type WorkerSlotExit,
} from '@flowfleet/platform';
import type {
  ReferenceWorkerFailure,
  ReferenceWorkerOp,
  ReferenceWorkerRequest,
} from './reference-worker-protocol.js';

/** A request as the pool writes it: the slot adds the call id. */
export type ReferenceSlotRequest = ReferenceWorkerRequest extends infer R
  ? R extends ReferenceWorkerRequest
    ? Omit<R, 'id'>
    : never
  : never;

/** Tells the pool that a slot's worker is gone and whether it had been serving. */
export type ReferenceSlotExitListener = (slot: ReferenceWorkerSlot, wasReady: boolean) => void;

function isErrorCode(code: string | undefined): code is ErrorCode {
  return code !== undefined && Object.hasOwn(ERROR_CODES, code);
}

/**
 * One reference worker thread and its bookkeeping: calls in flight (each answered by the reply
 * with its id, see platform's `WorkerSlot`) and what has been materialised in it (weight sets,
 * captures, workspaces). A worker that exits rejects every call in flight with
 * MODEL_REFERENCE_WORKER_EXITED (MODEL_REFERENCE_POOL_CLOSED when the pool terminated it). The
 * thread is unref'd while idle, so an idle pool never keeps a process alive.
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

  private readonly thread: WorkerSlot<ReferenceSlotRequest, ReferenceWorkerFailure>;

  private constructor(
    readonly index: number,
    worker: Worker,
    onExit: ReferenceSlotExitListener,
  ) {
    this.thread = new WorkerSlot<ReferenceSlotRequest, ReferenceWorkerFailure>({
      index,
      worker,
      failureError: (failure, op) => failureError(index, op, failure),
      exitError,
      onExit: (wasReady) => onExit(this, wasReady),
      unrefWhenIdle: true,
    });
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
   * @throws the FlowfleetError the worker raised (same code and details), INTERNAL_ERROR for an
   *   uncoded failure, MODEL_REFERENCE_WORKER_EXITED if the worker dies first,
   *   MODEL_REFERENCE_POOL_CLOSED if the pool terminates it.
   */
  call<T>(request: ReferenceSlotRequest, transfer: readonly ArrayBuffer[] = []): Promise<T> {
    return this.thread.call<T>(request, transfer);
  }

  /** Stops the worker; calls in flight reject with MODEL_REFERENCE_POOL_CLOSED. */
  terminate(): Promise<void> {
    return this.thread.terminate();
  }
}

function failureError(
  index: number,
  op: ReferenceWorkerOp,
  failure: ReferenceWorkerFailure,
): FlowfleetError {
  if (isErrorCode(failure.code)) {
    const details = (failure.details ?? {}) as Readonly<Record<string, unknown>>;
    return new FlowfleetError(failure.code, failure.message, { details });
  }
  return new FlowfleetError('INTERNAL_ERROR', `reference worker ${op} failed: ${failure.message}`, {
    details: { workerIndex: index, op },
    cause: new Error(failure.message),
  });
}

function exitError({ index, terminated, exitCode, lastError }: WorkerSlotExit): FlowfleetError {
  if (terminated) {
    return new FlowfleetError(
      'MODEL_REFERENCE_POOL_CLOSED',
      'the reference worker pool was closed',
      {
        details: { workerIndex: index },
      },
    );
  }
  const why = lastError === undefined ? '' : `: ${lastError}`;
  return new FlowfleetError(
    'MODEL_REFERENCE_WORKER_EXITED',
    `reference worker ${index} exited${exitCode === undefined ? '' : ` with code ${exitCode}`}${why}`,
    { details: { workerIndex: index, ...(exitCode === undefined ? {} : { exitCode }) } },
  );
}
