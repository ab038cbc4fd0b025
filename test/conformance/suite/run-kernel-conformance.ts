import { it } from 'vitest';
import type { BackendRegistries } from '@flowfleet/backends';
import { kernelConformanceChecks, type KernelConformanceOptions } from './kernel-conformance.js';

/**
 * Registers the shared kernel conformance suite as vitest tests; call it inside a `describe` of
 * the backend's test file, after the backend has declared its cells.
 */
export function runKernelConformance(
  backendName: string,
  registries: BackendRegistries = {},
  options: KernelConformanceOptions = {},
): void {
  for (const check of kernelConformanceChecks(backendName, registries, options)) {
    it(check.name, () => check.run());
  }
}
