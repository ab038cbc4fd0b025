import {
  declareOrtCells,
  ortCellWiring,
  OrtSessions,
  registerCpuBackend,
} from '@flowfleet/backends';
import { FlowfleetError } from '@flowfleet/errors';
import {
  createPlatform,
  detectPlatform,
  type ComputePool,
  type Platform,
  type PlatformFacts,
} from '@flowfleet/platform';
import {
  createComponentRegistry,
  createKernelRegistry,
  type ComponentBuilder,
  type KernelFn,
  type TupleRegistry,
} from '@flowfleet/registry';
import type { Logger } from 'pino';
import { registerExtraKernels, type ExtraKernel } from './extra-kernels.js';
import type { BackendChoice } from '../worker-options.js';

/** The worker's own dispatch membrane: its registries, facts and platform. */
export interface WorkerPlatform {
  readonly facts: PlatformFacts;
  readonly platform: Platform;
  readonly kernels: TupleRegistry<KernelFn>;
  readonly components: TupleRegistry<ComponentBuilder>;
  /** ONNX Runtime on the worker's pool, when its cells were declared. */
  readonly ort: OrtSessions | undefined;
}

/** What `setUpBackends` needs. */
export interface BackendSetupOptions {
  readonly backend: BackendChoice;
  readonly facts?: PlatformFacts;
  readonly extraKernels: readonly ExtraKernel[];
  /** The worker's compute pool (it owns and closes it): ONNX Runtime and the TS reference run there. */
  readonly pool: ComputePool;
  /** The component kinds of the cards served (ONNX Runtime cells are declared for these). */
  readonly componentKinds: readonly string[];
  readonly ortIntraOpThreads: number;
  readonly logger: Logger;
}

/**
 * Builds the worker's registries (its own, never the process-wide ones, so several workers can
 * share a test process) and platform, on the worker's compute pool. `cpu`: the TS reference
 * kernels, and components from the card's TS reference factory (forwards in the pool).
 * `ort-cpu` / `auto`: also the ONNX Runtime component cells, after loading ONNX Runtime into the
 * pool and probing the providers (manifest rows are read only after the probe, so they say what
 * really works here). `auto` falls back to the TS reference when ONNX Runtime fails.
 * @throws FlowfleetError WORKER_BACKEND_UNAVAILABLE when `ort-cpu` is asked for and cannot run
 */
export async function setUpBackends(options: BackendSetupOptions): Promise<WorkerPlatform> {
  const { backend, logger, pool } = options;
  const facts = options.facts ?? detectPlatform();
  const kernels = createKernelRegistry();
  const components = createComponentRegistry();
  registerCpuBackend({ kernels });
  registerExtraKernels(kernels, facts.device, options.extraKernels);
  let ort: OrtSessions | undefined;
  if (backend !== 'cpu') {
    try {
      const sessions = await OrtSessions.attach(pool, {
        intraOpThreads: options.ortIntraOpThreads,
      });
      await sessions.probeAll();
      ort = sessions;
    } catch (cause) {
      if (backend === 'ort-cpu') {
        throw new FlowfleetError(
          'WORKER_BACKEND_UNAVAILABLE',
          'onnxruntime-node cannot start here',
          {
            details: { backend },
            cause,
          },
        );
      }
      logger.warn(
        { err: cause },
        'onnxruntime-node cannot start: falling back to the TS reference',
      );
    }
  }
  if (ort !== undefined) {
    // Declared only after a successful probe, so the cells' predicates read real answers.
    declareOrtCells({
      registries: { components },
      kinds: options.componentKinds,
      ...ortCellWiring(ort),
    });
    const ortCpu = components.manifest().filter((row) => row.source === 'ort-cpu');
    if (backend === 'ort-cpu' && !ortCpu.some((row) => row.available)) {
      const reasons = [...new Set(ortCpu.map((row) => row.reason ?? 'unavailable'))];
      throw new FlowfleetError(
        'WORKER_BACKEND_UNAVAILABLE',
        `the ort-cpu backend is unavailable here (${reasons.join('; ')})`,
        { details: { backend, reasons } },
      );
    }
  }
  const platform = createPlatform({ facts, kernels, components, pool });
  return { facts, platform, kernels, components, ort };
}
