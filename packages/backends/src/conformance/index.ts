export { kernelConformanceChecks } from './kernel-conformance.js';
export type { ConformanceCheck, KernelConformanceOptions } from './kernel-conformance.js';
export { runKernelConformance } from './run-kernel-conformance.js';
export { solverCases } from './solver-cases.js';
export type { SolverCase, SolverOutput } from './solver-cases.js';
