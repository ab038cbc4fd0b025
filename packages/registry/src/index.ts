export { TupleRegistry } from './tuple-registry.js';
export type {
  Availability,
  AvailabilityPredicate,
  Cell,
  CellInput,
  CellMeta,
  CellSource,
  ManifestRow,
  RejectedCandidate,
  Resolution,
} from './tuple-registry.js';
export {
  COMPONENTS,
  COMPONENT_KEY_FIELDS,
  DEFAULT_VARIANT,
  KERNELS,
  KERNEL_KEY_FIELDS,
  createComponentRegistry,
  createKernelRegistry,
  registerComponent,
  registerKernel,
} from './registries.js';
export type {
  ComponentBuilder,
  ComponentRegistration,
  KernelFn,
  KernelRegistration,
} from './registries.js';
