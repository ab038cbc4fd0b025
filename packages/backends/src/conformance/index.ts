export { kernelConformanceChecks } from './kernel-conformance.js';
export type { ConformanceCheck, KernelConformanceOptions } from './kernel-conformance.js';
export { runKernelConformance } from './run-kernel-conformance.js';
export { solverCases } from './solver-cases.js';
export type { SolverCase, SolverOutput } from './solver-cases.js';
export { componentConformanceChecks } from './component-conformance.js';
export type {
  AsyncConformanceCheck,
  ComponentConformanceCase,
  ComponentConformanceOptions,
} from './component-conformance.js';
export { runComponentConformance } from './run-component-conformance.js';
