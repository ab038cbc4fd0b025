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
  DEVICE_ENV,
  type ComputePool,
  type DeviceChoice,
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
  /** Facts instead of detection (tests). */
  readonly facts?: PlatformFacts;
  /** The device to detect (default: what FLOWFLEET_DEVICE says). */
  readonly device?: DeviceChoice;
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
 * pool and probing cpu and the worker's own device's provider (manifest rows are read only after
 * the probe, so they say what really works here). `auto` falls back to the TS reference when ONNX Runtime fails — except on
 * a webgpu worker, whose components must run on onnxruntime's webgpu provider: there a failure to
 * start it, or a backend that would compute on the CPU, stops the worker instead of letting it
 * claim a GPU it does not use.
 * @throws FlowfleetError WORKER_BACKEND_UNAVAILABLE when `ort-cpu` is asked for and cannot run,
 *   or a webgpu worker cannot run its components on webgpu; PLAT_DEVICE_UNAVAILABLE from detection
 */
export async function setUpBackends(options: BackendSetupOptions): Promise<WorkerPlatform> {
  const { backend, logger, pool } = options;
  const facts =
    options.facts ??
    (options.device === undefined
      ? detectPlatform()
      : detectPlatform({ env: { ...process.env, [DEVICE_ENV]: options.device } }));
  const webgpu = facts.device === 'webgpu';
  if (webgpu && backend !== 'auto') {
    throw new FlowfleetError(
      'WORKER_BACKEND_UNAVAILABLE',
      `FLOWFLEET_BACKEND=${backend} computes on the CPU; a webgpu worker runs its components on onnxruntime's webgpu provider (leave FLOWFLEET_BACKEND=auto)`,
      { details: { backend, device: facts.device } },
    );
  }
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
      // Only the providers this worker's device can use: the others' cells are unavailable here
      // whatever a probe says (one device per worker), and a webgpu probe costs a Dawn device.
      const providers =
        facts.device === 'cpu' ? ['cpu' as const] : (['cpu', facts.device] as const);
      await Promise.all(providers.map((provider) => sessions.probe(provider)));
      ort = sessions;
    } catch (cause) {
      if (backend === 'ort-cpu' || webgpu) {
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
      device: facts.device,
      ...ortCellWiring(ort),
    });
    const ortWebgpu = components.manifest().filter((row) => row.source === 'ort-webgpu');
    if (webgpu && !ortWebgpu.every((row) => row.available)) {
      const reasons = [...new Set(ortWebgpu.map((row) => row.reason ?? 'unavailable'))];
      throw new FlowfleetError(
        'WORKER_BACKEND_UNAVAILABLE',
        `a WebGPU adapter was found (${facts.arch}), but onnxruntime's webgpu provider cannot run here (${reasons.join('; ')})`,
        { details: { backend, device: facts.device, reasons } },
      );
    }
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
