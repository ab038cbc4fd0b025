import { ComputePool } from '@flowfleet/platform';
import { setUpBackends, type WorkerPlatform } from '../compute/backend-setup.js';
import { step, type PhaseParts, type StartUpContext } from './shutdown-plan.js';

/** Where the worker's forwards run. */
export interface ComputeParts extends PhaseParts {
  /** The worker's one compute pool: every component it builds runs its forwards there. */
  readonly pool: ComputePool;
  /** Kernel and component registries, ONNX Runtime (when it started) and the platform. */
  readonly backends: WorkerPlatform;
}

/**
 * Phase 2: the compute pool, then the backends and the platform over it.
 * @throws FlowfleetError WORKER_BACKEND_UNAVAILABLE, PLAT_DEVICE_UNAVAILABLE, PLAT_*
 */
export async function startCompute({ options, logger }: StartUpContext): Promise<ComputeParts> {
  const pool = await ComputePool.create({ threads: options.ortThreads });
  let backends: WorkerPlatform;
  try {
    backends = await setUpBackends({
      backend: options.backend,
      ...(options.platformFacts === undefined ? {} : { facts: options.platformFacts }),
      ...(options.device === undefined ? {} : { device: options.device }),
      extraKernels: options.extraKernels,
      pool,
      componentKinds: options.cards.componentKinds(),
      ortIntraOpThreads: options.ortIntraOpThreads,
      logger,
    });
  } catch (error) {
    await pool.close();
    throw error;
  }
  return { pool, backends, shutdown: [step('compute pool', () => pool.close())] };
}
