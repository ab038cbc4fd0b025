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
  DEFAULT_VARIANT,
  KERNELS,
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
