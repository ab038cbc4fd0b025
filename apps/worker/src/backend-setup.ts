import {
  cachedProviderProbe,
  closeSharedOrtPool,
  configureSharedOrtPool,
  declareOrtCells,
  ortBuilderFor,
  probeOrtProviders,
  registerCpuBackend,
  sharedOrtPool,
} from '@flowfleet/backends';
import { FlowfleetError } from '@flowfleet/errors';
import { configureSharedReferencePool } from '@flowfleet/models';
import {
  createPlatform,
  detectPlatform,
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
import type { BackendChoice } from './worker-options.js';

/** The worker's own dispatch membrane: its registries, facts and platform. */
export interface WorkerPlatform {
  readonly facts: PlatformFacts;
  readonly platform: Platform;
  readonly kernels: TupleRegistry<KernelFn>;
  readonly components: TupleRegistry<ComponentBuilder>;
  /** True when the ONNX Runtime cells were declared (the shared pool may be running). */
  readonly usesOrt: boolean;
}

/** What `setUpBackends` needs. */
export interface BackendSetupOptions {
  readonly backend: BackendChoice;
  readonly facts?: PlatformFacts;
  readonly extraKernels: readonly ExtraKernel[];
  /** The component kinds of the cards served (ONNX Runtime cells are declared for these). */
  readonly componentKinds: readonly string[];
  readonly ortThreads: number;
  readonly ortIntraOpThreads: number;
  /** Threads of the TS reference pool (the card factories' forwards). */
  readonly referenceThreads: number;
  readonly logger: Logger;
}

/**
 * Builds the worker's registries (its own, never the process-wide ones, so several workers can
 * share a test process) and platform. `cpu`: the TS reference kernels, and components from the
 * card's TS reference factory (in the models package's worker-thread pool). `ort-cpu` / `auto`: also the ONNX Runtime component cells, after
 * probing the providers in the shared pool (manifest rows are read only after the probe, so they
 * say what really works here). `auto` falls back to the TS reference when ONNX Runtime fails.
 * @throws FlowfleetError WORKER_BACKEND_UNAVAILABLE when `ort-cpu` is asked for and cannot run
 */
export async function setUpBackends(options: BackendSetupOptions): Promise<WorkerPlatform> {
  const { backend, logger } = options;
  const facts = options.facts ?? detectPlatform();
  const kernels = createKernelRegistry();
  const components = createComponentRegistry();
  registerCpuBackend({ kernels });
  // The card's TS reference forwards (the terminal rung, and the whole `cpu` backend) run in the
  // models package's worker-thread pool: one thread per concurrent rollout.
  configureSharedReferencePool({ threads: options.referenceThreads });
  registerExtraKernels(kernels, facts.device, options.extraKernels);
  let usesOrt = false;
  if (backend !== 'cpu') {
    configureSharedOrtPool({
      threads: options.ortThreads,
      intraOpThreads: options.ortIntraOpThreads,
    });
    try {
      await probeOrtProviders({ pool: await sharedOrtPool() });
      usesOrt = true;
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
      await closeSharedOrtPool();
    }
  }
  if (usesOrt) {
    // Declared only after a successful probe, so the cells' predicates read real answers.
    declareOrtCells({
      registries: { components },
      kinds: options.componentKinds,
      builderFor: ortBuilderFor,
      cachedProbe: cachedProviderProbe,
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
  const platform = createPlatform({ facts, kernels, components });
  return { facts, platform, kernels, components, usesOrt };
}
