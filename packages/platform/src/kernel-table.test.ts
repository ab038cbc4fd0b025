import { isFlowfleetError } from '@flowfleet/errors';
import {
  createComponentRegistry,
  createKernelRegistry,
  registerKernel,
  type KernelFn,
  type TupleRegistry,
} from '@flowfleet/registry';
import { describe, expect, it } from 'vitest';
import { createPlatform } from './create-platform.js';
import type { PlatformFacts } from './platform-types.js';

type Step = (x: number) => number;

const CPU: PlatformFacts = { device: 'cpu', arch: 'x86-64-v3', features: [], cpuArch: 'x86-64-v3' };
const CUDA_SM90: PlatformFacts = {
  device: 'cuda',
  arch: 'sm90',
  features: [],
  cpuArch: 'x86-64-v3',
};

function kernel(
  registry: TupleRegistry<KernelFn>,
  key: [string, string, string, string],
  fn: Step,
  options: { source?: string; available?: () => boolean; workspaceBytes?: number } = {},
) {
  const [op, device, arch, variant] = key;
  registerKernel(
    {
      op,
      device,
      arch,
      variant,
      fn,
      source: options.source ?? device,
      workspaceBytes: options.workspaceBytes ?? 0,
      ...(options.available === undefined ? {} : { available: options.available }),
    },
    registry,
  );
}

describe('KernelTable', () => {
  it('resolves once and caches the callable (the predicate is not probed again)', () => {
    const kernels = createKernelRegistry();
    let probes = 0;
    const fn: Step = (x) => x + 1;
    kernel(kernels, ['step', 'cpu', 'generic', 'default'], fn, {
      available: () => {
        probes++;
        return true;
      },
      workspaceBytes: 64,
    });
    const table = createPlatform({ facts: CPU, kernels }).kernels;
    expect(table.get<Step>('step')).toBe(fn);
    expect(table.get<Step>('step')).toBe(fn);
    expect(table.get<Step>('step', 'default')(1)).toBe(2);
    expect(probes).toBe(1);
    expect(table.resolution('step')).toMatchObject({
      key: ['step', 'cpu', 'generic', 'default'],
      source: 'cpu',
      workspaceBytes: 64,
    });
  });

  it('prefers an available cuda cell over cpu on a cuda platform', () => {
    const kernels = createKernelRegistry();
    const onCpu: Step = (x) => x;
    const onCuda: Step = (x) => -x;
    kernel(kernels, ['step', 'cpu', 'x86-64-v3', 'default'], onCpu);
    kernel(kernels, ['step', 'cuda', 'sm80', 'default'], onCuda, { source: 'ort-cuda' });
    expect(createPlatform({ facts: CUDA_SM90, kernels }).kernels.get<Step>('step')).toBe(onCuda);
    expect(createPlatform({ facts: CPU, kernels }).kernels.get<Step>('step')).toBe(onCpu);
  });

  it('skips an unavailable cuda cell and lands on cpu', () => {
    const kernels = createKernelRegistry();
    const onCpu: Step = (x) => x;
    kernel(kernels, ['step', 'cuda', 'sm90', 'default'], (x) => -x, { available: () => false });
    kernel(kernels, ['step', 'cpu', 'generic', 'default'], onCpu);
    const table = createPlatform({ facts: CUDA_SM90, kernels }).kernels;
    expect(table.get<Step>('step')).toBe(onCpu);
    expect(table.resolution('step').rejected[0]).toEqual({
      key: ['step', 'cuda', 'sm90', 'default'],
      reason: 'availability predicate returned false',
    });
  });

  it('resolves a cuda platform on this box to the cpu cells (cpu arch from the host)', () => {
    const kernels = createKernelRegistry();
    const onCpu: Step = (x) => x;
    kernel(kernels, ['step', 'cpu', 'generic', 'default'], onCpu);
    const withoutCpuArch: PlatformFacts = { device: 'cuda', arch: 'sm90', features: [] };
    const table = createPlatform({ facts: withoutCpuArch, kernels }).kernels;
    expect(table.get<Step>('step')).toBe(onCpu);
    expect(table.resolution('step').key).toEqual(['step', 'cpu', 'generic', 'default']);
  });

  it('falls back from an unknown variant to default at the same rung first', () => {
    const kernels = createKernelRegistry();
    const fast: Step = (x) => x * 2;
    const v3Default: Step = (x) => x * 3;
    kernel(kernels, ['step', 'cpu', 'x86-64-v3', 'default'], v3Default);
    kernel(kernels, ['step', 'cpu', 'generic', 'fast'], fast);
    const table = createPlatform({ facts: CPU, kernels }).kernels;
    expect(table.get<Step>('step', 'no-such-variant')).toBe(v3Default);
    // A named variant at an older arch loses to default at a newer one (arch > variant).
    expect(table.get<Step>('step', 'fast')).toBe(v3Default);
  });

  it('treats a throwing predicate as unavailable', () => {
    const kernels = createKernelRegistry();
    const onGeneric: Step = (x) => x;
    kernel(kernels, ['step', 'cpu', 'x86-64-v3', 'default'], (x) => -x, {
      available: () => {
        throw new Error('driver missing');
      },
    });
    kernel(kernels, ['step', 'cpu', 'generic', 'default'], onGeneric);
    const table = createPlatform({ facts: CPU, kernels }).kernels;
    expect(table.get<Step>('step')).toBe(onGeneric);
    expect(table.resolution('step').rejected.map((r) => r.reason)).toContain(
      'availability predicate threw: driver missing',
    );
  });

  it('throws PLAT_NO_KERNEL listing every rejected candidate and why', () => {
    const kernels = createKernelRegistry();
    kernel(kernels, ['step', 'cpu', 'x86-64-v3', 'default'], (x) => x, { available: () => false });
    kernel(kernels, ['step', 'cpu', 'x86-64-v2', 'default'], (x) => x, {
      available: () => {
        throw new Error('boom');
      },
    });
    const table = createPlatform({ facts: CPU, kernels }).kernels;
    try {
      table.get('step');
      expect.unreachable();
    } catch (error) {
      expect(isFlowfleetError(error, 'PLAT_NO_KERNEL')).toBe(true);
      const { message, details } = error as { message: string; details: { rejected: unknown } };
      expect(details.rejected).toEqual([
        {
          key: ['step', 'cpu', 'x86-64-v3', 'default'],
          reason: 'availability predicate returned false',
        },
        {
          key: ['step', 'cpu', 'x86-64-v2', 'default'],
          reason: 'availability predicate threw: boom',
        },
        { key: ['step', 'cpu', 'generic', 'default'], reason: 'not registered' },
      ]);
      expect(message).toContain(
        '(step, cpu, x86-64-v3, default): availability predicate returned false',
      );
      expect(message).toContain(
        '(step, cpu, x86-64-v2, default): availability predicate threw: boom',
      );
      expect(message).toContain('(step, cpu, generic, default): not registered');
    }
    // A miss is not cached: once a cell appears, the same table finds it.
    const late: Step = (x) => x;
    kernel(kernels, ['step', 'cpu', 'generic', 'default'], late);
    expect(table.get<Step>('step')).toBe(late);
  });

  it('throws REG_KEY_ARITY for a key of the wrong arity', () => {
    const kernels = createKernelRegistry();
    expect(() =>
      kernels.register({ key: ['step', 'cpu', 'generic'], fn: () => 0, source: 'cpu' }),
    ).toThrow(expect.objectContaining({ code: 'REG_KEY_ARITY' }));
    // A (kind, device, variant) registry handed in as the kernel table cannot answer 4-field keys.
    const wrong = createComponentRegistry() as unknown as TupleRegistry<KernelFn>;
    const table = createPlatform({ facts: CPU, kernels: wrong }).kernels;
    expect(() => table.get('step')).toThrow(expect.objectContaining({ code: 'REG_KEY_ARITY' }));
  });

  it('rejects facts with an arch no chain knows', () => {
    expect(() => createPlatform({ facts: { ...CPU, arch: 'pentium' } })).toThrow(
      expect.objectContaining({ code: 'PLAT_UNKNOWN_ARCH' }),
    );
  });
});
