// The cpu backend (the reference kernels) passes the shared kernel conformance suite.
import { registerCpuBackend } from '@flowfleet/backends';
import { createComponentRegistry, createKernelRegistry } from '@flowfleet/registry';
import { describe } from 'vitest';
import { runKernelConformance } from './suite/index.js';

function cpuRegistries() {
  const registries = { kernels: createKernelRegistry(), components: createComponentRegistry() };
  registerCpuBackend(registries);
  return registries;
}

describe('cpu backend conformance', () => {
  runKernelConformance('cpu', cpuRegistries(), { requireAvailable: true });
});
