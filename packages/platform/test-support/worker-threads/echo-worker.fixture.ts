// A worker entry for spawn-module-worker.test.ts: proves a `.ts` entry runs from sources and
// resolves a workspace package through the `@flowfleet/source` condition.
import { parentPort, workerData } from 'node:worker_threads';
import { FlowfleetError } from '@flowfleet/errors';

const typed: number = (workerData as { value: number }).value;
parentPort?.postMessage({
  doubled: typed * 2,
  errorsResolvedTo: import.meta.resolve('@flowfleet/errors'),
  coded: new FlowfleetError('INTERNAL_ERROR', 'probe').code,
});
