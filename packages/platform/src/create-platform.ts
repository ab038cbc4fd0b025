import {
  COMPONENTS,
  KERNELS,
  type ComponentBuilder,
  type KernelFn,
  type TupleRegistry,
} from '@flowfleet/registry';
import { buildComponent, type ComponentBuild } from './build-component.js';
import { componentMatrix, kernelMatrix, type CapabilityMatrix } from './capability-matrix.js';
import { detectPlatform } from './detect-platform.js';
import { archChain, type ChainOrigin } from './fallback-chains.js';
import { KernelTable } from './kernel-table.js';
import type { ComponentBuildContext, ComponentSpec, PlatformFacts } from './platform-types.js';
import type { ComputePool } from './worker-threads/compute-pool.js';

/** Options of `createPlatform`; every field defaults to this process's own. */
export interface PlatformOptions {
  /** Facts to dispatch for (default: `detectPlatform()`). */
  readonly facts?: PlatformFacts;
  readonly kernels?: TupleRegistry<KernelFn>;
  readonly components?: TupleRegistry<ComponentBuilder>;
  /**
   * The compute thread pool handed to every component builder and card factory (the TS
   * reference runs its forwards there). Owned by the caller, who closes it after the components.
   */
  readonly pool?: ComputePool;
}

/** One process's view of the dispatch membrane: its facts, kernels and component builders. */
export interface Platform {
  readonly facts: PlatformFacts;
  readonly kernels: KernelTable;
  /** The compute pool given to `createPlatform`, if any. */
  readonly pool: ComputePool | undefined;
  buildComponent<TInstance, TComponent>(
    spec: ComponentSpec<TInstance, TComponent>,
    instance: TInstance,
  ): Promise<ComponentBuild<TComponent>>;
  kernelMatrix(): CapabilityMatrix;
  componentMatrix(): CapabilityMatrix;
}

/**
 * Creates a Platform. Injected facts without `cpuArch` fall back to this host's CPU arch when the
 * device chain reaches `cpu`.
 * @throws FlowfleetError PLAT_UNKNOWN_ARCH when the facts name an arch no chain knows
 */
export function createPlatform(options: PlatformOptions = {}): Platform {
  const facts = options.facts ?? detectPlatform();
  const kernels = options.kernels ?? KERNELS;
  const components = options.components ?? COMPONENTS;
  const cpuArch =
    facts.cpuArch ??
    (facts.device === 'cpu' ? facts.arch : (detectPlatform().cpuArch ?? 'generic'));
  const origin: ChainOrigin = { device: facts.device, arch: facts.arch, cpuArch };
  // Fail at creation, not at the first lookup, when an arch is unknown.
  archChain(origin.arch, origin.device);
  archChain(origin.cpuArch, 'cpu');
  const table = new KernelTable(kernels, origin);
  const context: ComponentBuildContext = { pool: options.pool };
  return {
    facts,
    kernels: table,
    pool: options.pool,
    buildComponent: (spec, instance) =>
      buildComponent(components, facts.device, spec, instance, context),
    kernelMatrix: () => kernelMatrix(kernels, facts, origin),
    componentMatrix: () => componentMatrix(components, facts),
  };
}
