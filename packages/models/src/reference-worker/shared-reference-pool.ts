import { ReferenceWorkerPool, type ReferenceWorkerPoolOptions } from './reference-worker-pool.js';

let sharedOptions: ReferenceWorkerPoolOptions = {};
let shared: Promise<ReferenceWorkerPool> | undefined;

/** Sets the options of the process-wide reference pool; they apply to the next pool it starts. */
export function configureSharedReferencePool(options: ReferenceWorkerPoolOptions): void {
  sharedOptions = options;
}

/**
 * The process-wide reference worker pool the card factories use, started on first forward
 * (concurrent callers share the start). A failed start is forgotten so the next call retries.
 * Its idle workers do not keep the process alive.
 * @throws MODEL_REFERENCE_WORKER_EXITED when its workers cannot start.
 */
export function sharedReferencePool(): Promise<ReferenceWorkerPool> {
  if (shared === undefined) {
    const starting = ReferenceWorkerPool.create(sharedOptions);
    shared = starting;
    starting.catch(() => {
      if (shared === starting) shared = undefined;
    });
  }
  return shared;
}

/** Closes the process-wide reference pool if it was started; idempotent. */
export async function closeSharedReferencePool(): Promise<void> {
  const closing = shared;
  shared = undefined;
  if (closing === undefined) return;
  const pool = await closing.catch(() => undefined);
  await pool?.close();
}
