// A compute handler module whose factory fails with a coded error (a backend whose runtime
// cannot load), for compute-pool.test.ts.
import { FlowfleetError } from '@flowfleet/errors';
import type { ComputeHandlerFactory } from '../../src/worker-threads/compute-handler.js';

export const createComputeHandler: ComputeHandlerFactory = () => {
  throw new FlowfleetError('PLAT_INVALID_OVERRIDE', 'this handler never loads');
};
