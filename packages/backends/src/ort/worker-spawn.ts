import type { Worker } from 'node:worker_threads';
import { moduleWorkerUrl, spawnModuleWorker } from '@flowfleet/platform';
import type { OrtWorkerData } from './worker-protocol.js';

/**
 * Starts one ONNX Runtime worker thread: `ort-worker.js` from compiled output, or `ort-worker.ts`
 * through tsx when this module itself runs from sources (vitest, tsx scripts); platform's
 * `spawnModuleWorker` does the bootstrapping.
 */
export function spawnOrtWorker(workerData: OrtWorkerData): Worker {
  return spawnModuleWorker(moduleWorkerUrl(import.meta.url, 'ort-worker'), {
    workerData,
    name: `ort-worker-${workerData.workerIndex}`,
  });
}
