import { OrtWorkerPool, type OrtWorkerPoolOptions } from './ort-worker-pool.js';

let sharedOptions: OrtWorkerPoolOptions = {};
let shared: Promise<OrtWorkerPool> | undefined;

/** Sets the options of the process-wide pool; they apply to the next pool `sharedOrtPool()` starts. */
export function configureSharedOrtPool(options: OrtWorkerPoolOptions): void {
  sharedOptions = options;
}

/**
 * The process-wide ONNX Runtime worker pool that `buildOrtComponent` uses, started on first use
 * (concurrent callers share the start). A failed start is forgotten so the next call retries.
 * @throws BACK_ORT_LOAD_FAILED or BACK_ORT_WORKER_EXITED when its workers cannot start.
 */
export function sharedOrtPool(): Promise<OrtWorkerPool> {
  if (shared === undefined) {
    const starting = OrtWorkerPool.create(sharedOptions);
    shared = starting;
    starting.catch(() => {
      if (shared === starting) shared = undefined;
    });
  }
  return shared;
}

/** Closes the process-wide pool if it was started; idempotent. The worker app calls it on shutdown. */
export async function closeSharedOrtPool(): Promise<void> {
  const closing = shared;
  shared = undefined;
  if (closing === undefined) return;
  const pool = await closing.catch(() => undefined);
  await pool?.close();
}
