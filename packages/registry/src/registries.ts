import { FlowfleetError } from '@flowfleet/errors';
import {
  TupleRegistry,
  type AvailabilityPredicate,
  type Cell,
  type CellMeta,
} from './tuple-registry.js';

/**
 * A kernel callable. The registry does not know signatures; the platform's KernelTable hands the
 * callable back typed by the caller, which knows the op.
 */
export type KernelFn = (...args: never[]) => unknown;

/** A component builder (spec, instance) → component. Opaque here, typed by the platform. */
export type ComponentBuilder = (...args: never[]) => unknown;

/** The fields of a KERNELS key, in order. */
export const KERNEL_KEY_FIELDS = ['op', 'device', 'arch', 'variant'] as const;
/** The fields of a COMPONENTS key, in order. */
export const COMPONENT_KEY_FIELDS = ['kind', 'device', 'variant'] as const;

/** The variant every lookup falls back to. */
export const DEFAULT_VARIANT = 'default';

/** Creates an empty kernel registry keyed (op, device, arch, variant). */
export function createKernelRegistry(name = 'KERNELS'): TupleRegistry<KernelFn> {
  return new TupleRegistry<KernelFn>(name, KERNEL_KEY_FIELDS);
}

/** Creates an empty component registry keyed (kind, device, variant). */
export function createComponentRegistry(name = 'COMPONENTS'): TupleRegistry<ComponentBuilder> {
  return new TupleRegistry<ComponentBuilder>(name, COMPONENT_KEY_FIELDS);
}

/** The process-wide kernel registry. */
export const KERNELS: TupleRegistry<KernelFn> = createKernelRegistry();
/** The process-wide component registry. */
export const COMPONENTS: TupleRegistry<ComponentBuilder> = createComponentRegistry();

/** A kernel declaration. */
export interface KernelRegistration {
  readonly op: string;
  readonly device: string;
  readonly arch: string;
  readonly variant?: string;
  readonly fn: KernelFn;
  readonly source: string;
  /** Scratch memory the kernel needs; a captured graph sizes its workspace to the largest. */
  readonly workspaceBytes: number;
  readonly available?: AvailabilityPredicate;
  readonly meta?: CellMeta;
  readonly replace?: boolean;
}

/** A component-builder declaration. */
export interface ComponentRegistration {
  readonly kind: string;
  readonly device: string;
  readonly variant?: string;
  readonly build: ComponentBuilder;
  readonly source: string;
  readonly available?: AvailabilityPredicate;
  readonly meta?: CellMeta;
  readonly replace?: boolean;
}

/**
 * Declares a kernel at (op, device, arch, variant ?? 'default').
 * @throws FlowfleetError REG_KEY_ARITY, REG_INVALID_KEY, REG_DUPLICATE_CELL, REG_INVALID_WORKSPACE
 */
export function registerKernel(
  registration: KernelRegistration,
  registry: TupleRegistry<KernelFn> = KERNELS,
): Cell<KernelFn> {
  const { op, device, arch, variant = DEFAULT_VARIANT, workspaceBytes } = registration;
  if (!Number.isInteger(workspaceBytes) || workspaceBytes < 0) {
    throw new FlowfleetError(
      'REG_INVALID_WORKSPACE',
      `workspaceBytes must be a non-negative integer, got ${workspaceBytes}`,
      { details: { op, device, arch, variant, workspaceBytes: String(workspaceBytes) } },
    );
  }
  return registry.register({
    key: [op, device, arch, variant],
    fn: registration.fn,
    source: registration.source,
    ...(registration.available === undefined ? {} : { available: registration.available }),
    meta: { ...registration.meta, workspaceBytes },
    ...(registration.replace === undefined ? {} : { replace: registration.replace }),
  });
}

/**
 * Declares a component builder at (kind, device, variant ?? 'default').
 * @throws FlowfleetError REG_KEY_ARITY, REG_INVALID_KEY, REG_DUPLICATE_CELL
 */
export function registerComponent(
  registration: ComponentRegistration,
  registry: TupleRegistry<ComponentBuilder> = COMPONENTS,
): Cell<ComponentBuilder> {
  const { kind, device, variant = DEFAULT_VARIANT } = registration;
  return registry.register({
    key: [kind, device, variant],
    fn: registration.build,
    source: registration.source,
    ...(registration.available === undefined ? {} : { available: registration.available }),
    ...(registration.meta === undefined ? {} : { meta: registration.meta }),
    ...(registration.replace === undefined ? {} : { replace: registration.replace }),
  });
}
