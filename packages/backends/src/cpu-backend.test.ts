import type { flowMatchStep } from '@flowfleet/numerics';
import { archChain, createPlatform, detectPlatform } from '@flowfleet/platform';
import {
  createComponentRegistry,
  createKernelRegistry,
  KERNELS,
  registerKernel,
} from '@flowfleet/registry';
import { describe, expect, it } from 'vitest';
import { registerCpuBackend } from './cpu-backend.js';

const OPS = ['flow_match_step', 'cfg_combine', 'flow_sde_step'];

function cpuRegistries() {
  const registries = { kernels: createKernelRegistry(), components: createComponentRegistry() };
  registerCpuBackend(registries);
  return registries;
}

describe('registerCpuBackend', () => {
  it('resolves the reference kernels on this box with source cpu', () => {
    const platform = createPlatform(cpuRegistries());
    expect(platform.facts).toBe(detectPlatform());
    for (const op of OPS) {
      expect(platform.kernels.resolution(op)).toMatchObject({
        key: [op, 'cpu', 'generic', 'default'],
        source: 'cpu',
        workspaceBytes: 0,
      });
    }
    const step = platform.kernels.get<typeof flowMatchStep>('flow_match_step');
    const x = Float32Array.of(1, 2);
    expect([...step(x, Float32Array.of(1, -1), 1, 0.5)]).toEqual([0.5, 2.5]);
  });

  it('resolves a cuda platform on this box (no cuda cells) to the cpu cells', () => {
    const facts = { device: 'cuda', arch: 'sm90', features: ['injected'] } as const;
    const platform = createPlatform({ facts, ...cpuRegistries() });
    for (const op of OPS) expect(platform.kernels.resolution(op).source).toBe('cpu');
    expect(platform.kernels.resolution('cfg_combine').rejected.map((r) => r.key.join('/'))).toEqual(
      [
        'cfg_combine/cuda/sm90/default',
        'cfg_combine/cuda/sm80/default',
        'cfg_combine/cuda/ptx/default',
        'cfg_combine/cuda/generic/default',
        ...archChain(detectPlatform().cpuArch ?? 'generic')
          .filter((arch) => arch !== 'generic')
          .map((arch) => `cfg_combine/cpu/${arch}/default`),
      ],
    );
  });

  it('is idempotent, and defaults to the process-wide KERNELS', () => {
    const registries = cpuRegistries();
    registerCpuBackend(registries);
    expect(registries.kernels.cells()).toHaveLength(3);
    registerCpuBackend();
    registerCpuBackend();
    expect(KERNELS.cells().filter((cell) => cell.source === 'cpu')).toHaveLength(3);
  });

  it('refuses to shadow another backend at its keys', () => {
    const kernels = createKernelRegistry();
    registerKernel(
      {
        op: 'cfg_combine',
        device: 'cpu',
        arch: 'generic',
        fn: () => 0,
        source: 'other',
        workspaceBytes: 0,
      },
      kernels,
    );
    expect(() => registerCpuBackend({ kernels })).toThrow(
      expect.objectContaining({ code: 'REG_DUPLICATE_CELL' }),
    );
  });
});
