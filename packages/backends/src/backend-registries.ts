import {
  COMPONENTS,
  KERNELS,
  type ComponentBuilder,
  type KernelFn,
  type TupleRegistry,
} from '@flowfleet/registry';

/** The registries a backend declares its cells in; each defaults to the process-wide one. */
export interface BackendRegistries {
  readonly kernels?: TupleRegistry<KernelFn>;
  readonly components?: TupleRegistry<ComponentBuilder>;
}

/** The registries with defaults filled in. */
export interface ResolvedRegistries {
  readonly kernels: TupleRegistry<KernelFn>;
  readonly components: TupleRegistry<ComponentBuilder>;
}

/** Fills in the process-wide KERNELS and COMPONENTS for missing registries. */
export function resolveRegistries(registries: BackendRegistries = {}): ResolvedRegistries {
  return {
    kernels: registries.kernels ?? KERNELS,
    components: registries.components ?? COMPONENTS,
  };
}

/**
 * True when `registry` already holds a cell at `key` from `source` (so declaring it again is a
 * no-op). A cell from another source is left for `register` to reject as a duplicate.
 */
export function isDeclaredBy<F>(
  registry: TupleRegistry<F>,
  key: readonly string[],
  source: string,
): boolean {
  return registry.get(key)?.source === source;
}
