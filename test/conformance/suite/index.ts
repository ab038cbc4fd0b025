export type { KernelConformanceOptions } from './kernel-conformance.js';
export { runKernelConformance } from './run-kernel-conformance.js';
export { componentConformanceChecks } from './component-conformance.js';
export type {
  AsyncConformanceCheck,
  ComponentConformanceCase,
  ComponentConformanceOptions,
} from './component-conformance.js';
export { runComponentConformance } from './run-component-conformance.js';
