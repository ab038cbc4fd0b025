import {
  createComponentRegistry,
  createKernelRegistry,
  registerComponent,
  registerKernel,
} from '@flowfleet/registry';
import { describe, expect, it } from 'vitest';
import { createPlatform } from './create-platform.js';
import type { PlatformFacts } from './platform-types.js';

const CUDA: PlatformFacts = { device: 'cuda', arch: 'sm90', features: [], cpuArch: 'x86-64-v2' };

describe('capability matrices', () => {
  it('list unavailable cells with their reason, and never pick them', () => {
    const kernels = createKernelRegistry();
    const fn = () => 0;
    registerKernel(
      {
        op: 'step',
        device: 'cuda',
        arch: 'sm90',
        fn,
        source: 'ort-cuda',
        workspaceBytes: 8,
        available: () => false,
      },
      kernels,
    );
    registerKernel(
      {
        op: 'step',
        device: 'cpu',
        arch: 'x86-64-v2',
        fn,
        source: 'simd',
        workspaceBytes: 0,
        available: () => {
          throw new Error('no avx');
        },
      },
      kernels,
    );
    registerKernel(
      { op: 'step', device: 'cpu', arch: 'generic', fn, source: 'cpu', workspaceBytes: 0 },
      kernels,
    );
    registerKernel(
      {
        op: 'other',
        device: 'cpu',
        arch: 'generic',
        variant: 'fast',
        fn,
        source: 'cpu',
        workspaceBytes: 0,
        available: () => false,
      },
      kernels,
    );
    const platform = createPlatform({
      facts: CUDA,
      kernels,
      components: createComponentRegistry(),
    });
    const matrix = platform.kernelMatrix();
    expect(matrix.facts).toBe(CUDA);
    expect(matrix.cells).toHaveLength(4);
    expect(matrix.cells[0]).toMatchObject({
      key: { op: 'step', device: 'cuda', arch: 'sm90', variant: 'default' },
      available: false,
      reason: 'availability predicate returned false',
      source: 'ort-cuda',
      meta: { workspaceBytes: 8 },
    });
    expect(matrix.cells[1]).toMatchObject({
      available: false,
      reason: 'availability predicate threw: no avx',
    });
    expect(matrix.picks).toEqual([
      expect.objectContaining({
        name: 'step',
        variant: 'default',
        key: ['step', 'cpu', 'generic', 'default'],
        source: 'cpu',
      }),
      expect.objectContaining({ name: 'other', variant: 'fast', key: null, source: null }),
    ]);
    expect(() => platform.kernels.get('other', 'fast')).toThrow(
      expect.objectContaining({ code: 'PLAT_NO_KERNEL' }),
    );
    expect(platform.kernels.resolution('step').source).toBe('cpu');
  });

  it('component matrix: a null pick means the card factory builds it', () => {
    const components = createComponentRegistry();
    registerComponent(
      { kind: 'dit', device: 'cuda', build: () => 0, source: 'ort-cuda', available: () => false },
      components,
    );
    registerComponent(
      { kind: 'text_encoder', device: 'cpu', build: () => 0, source: 'ort-cpu' },
      components,
    );
    const matrix = createPlatform({
      facts: CUDA,
      kernels: createKernelRegistry(),
      components,
    }).componentMatrix();
    expect(matrix.cells.map((row) => [row.key['kind'], row.available])).toEqual([
      ['dit', false],
      ['text_encoder', true],
    ]);
    expect(matrix.picks).toEqual([
      expect.objectContaining({ name: 'dit', key: null, source: null }),
      expect.objectContaining({
        name: 'text_encoder',
        key: ['text_encoder', 'cpu', 'default'],
        source: 'ort-cpu',
      }),
    ]);
  });
});
