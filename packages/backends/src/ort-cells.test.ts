import { existsSync } from 'node:fs';
import { createPlatform, type ComponentForward, type PlatformFacts } from '@flowfleet/platform';
import { createComponentRegistry, createKernelRegistry } from '@flowfleet/registry';
import { describe, expect, it } from 'vitest';
import { ortBindingPath } from './ort-binding-path.js';
import {
  declareOrtCells,
  HOST_ORT_FACTS,
  ortAvailability,
  type OrtCellProvider,
  type OrtHostFacts,
  type OrtProbeResult,
} from './ort-cells.js';

const CPU: PlatformFacts = { device: 'cpu', arch: 'generic', features: [], cpuArch: 'generic' };
const CUDA: PlatformFacts = { device: 'cuda', arch: 'sm90', features: [], cpuArch: 'generic' };

function fakeComponent(source: string): ComponentForward {
  return {
    kind: 'dit',
    source,
    run: () => Promise.resolve({}),
    dispose: () => Promise.resolve(),
  };
}

function declare(
  probes: Partial<Record<OrtCellProvider, OrtProbeResult>> = {},
  host?: OrtHostFacts,
) {
  const components = createComponentRegistry();
  const asked: OrtCellProvider[] = [];
  const options = {
    registries: { components },
    kinds: ['dit', 'text_encoder', 'dit'],
    builderFor: (provider: OrtCellProvider) => {
      asked.push(provider);
      return () => Promise.resolve(fakeComponent(`ort-${provider}`));
    },
    cachedProbe: (provider: OrtCellProvider) => probes[provider],
  };
  declareOrtCells(options, host);
  return { components, asked, options };
}

function reasons(components: ReturnType<typeof createComponentRegistry>) {
  return Object.fromEntries(
    components
      .manifest()
      .filter((row) => row.key['kind'] === 'dit')
      .map((row) => [row.source, row.available ? 'available' : row.reason]),
  );
}

describe('declareOrtCells', () => {
  it('declares ort-cpu, ort-cuda and ort-webgpu for the given kinds (deduplicated), once', () => {
    const { components, asked, options } = declare();
    expect(components.cells().map((cell) => `${cell.source}:${cell.key.join('/')}`)).toEqual([
      'ort-cpu:dit/cpu/default',
      'ort-cpu:text_encoder/cpu/default',
      'ort-cuda:dit/cuda/default',
      'ort-cuda:text_encoder/cuda/default',
      'ort-webgpu:dit/webgpu/default',
      'ort-webgpu:text_encoder/webgpu/default',
    ]);
    expect(asked).toEqual(['cpu', 'cuda', 'webgpu']);
    declareOrtCells(options);
    expect(components.cells()).toHaveLength(6);
    expect(asked).toHaveLength(3);
  });

  it('on this box: ort-cpu iff the binding is on disk; cuda iff detection says cuda; webgpu not probed', () => {
    const binding = ortBindingPath();
    expect(binding).toMatch(/onnxruntime_binding\.node$/);
    const { components } = declare();
    expect(reasons(components)).toEqual({
      'ort-cpu': existsSync(binding ?? '')
        ? 'available'
        : expect.stringContaining('binding missing'),
      'ort-cuda':
        HOST_ORT_FACTS.platform().device === 'cuda'
          ? 'available'
          : expect.stringContaining('no CUDA device'),
      'ort-webgpu':
        'availability predicate threw: ort-webgpu: not probed: call OrtSessions.probeAll()',
    });
  });

  it('makes ort-webgpu available only on a webgpu worker when the worker names its device', () => {
    const webgpu = { webgpu: { available: true } };
    for (const [device, expected] of [
      ['webgpu', 'available'],
      ['cpu', expect.stringContaining('this worker serves cpu (one device per worker process')],
    ] as const) {
      const components = createComponentRegistry();
      declareOrtCells({
        registries: { components },
        kinds: ['dit'],
        builderFor: (provider) => () => Promise.resolve(fakeComponent(`ort-${provider}`)),
        cachedProbe: (provider) => (webgpu as Record<string, OrtProbeResult>)[provider],
        device,
      });
      expect(reasons(components)['ort-webgpu']).toEqual(expected);
      // The cpu rung stays available on either: a webgpu worker's device chain ends in cpu.
      expect(reasons(components)['ort-cpu']).toBe('available');
    }
  });

  it('follows cached probes: a successful webgpu probe makes it available, a failed one says why', () => {
    const { components } = declare({
      webgpu: { available: true },
      cpu: { available: false, reason: 'session creation failed: bad build' },
    });
    expect(reasons(components)).toMatchObject({
      'ort-cpu': 'availability predicate threw: ort-cpu: session creation failed: bad build',
      'ort-webgpu': 'available',
    });
  });

  it('needs the binding on disk and, for cuda, a cuda platform', () => {
    const missing: OrtHostFacts = {
      bindingPath: () => '/nowhere/onnxruntime_binding.node',
      exists: () => false,
      platform: () => CPU,
    };
    expect(() => ortAvailability('cpu', () => undefined, missing)()).toThrow(
      'ort-cpu: native binding missing at /nowhere/onnxruntime_binding.node',
    );
    const uninstalled: OrtHostFacts = { ...missing, bindingPath: () => undefined };
    expect(() => ortAvailability('cpu', () => undefined, uninstalled)()).toThrow(
      expect.objectContaining({ code: 'BACK_PROVIDER_UNAVAILABLE' }),
    );
    const cudaBox: OrtHostFacts = { ...missing, exists: () => true, platform: () => CUDA };
    expect(ortAvailability('cuda', () => undefined, cudaBox)()).toBe(true);
    expect(() =>
      ortAvailability('cuda', () => ({ available: false, reason: 'libcudnn missing' }), cudaBox)(),
    ).toThrow('ort-cuda: libcudnn missing');
  });

  it('builds through the ort cell on a cpu platform, and on a cuda platform falls to ort-cpu', async () => {
    const { components } = declare();
    const spec = { id: 'tiny/dit', kind: 'dit', factory: () => fakeComponent('card') };
    const kernels = createKernelRegistry();
    const onCpu = await createPlatform({ facts: CPU, kernels, components }).buildComponent(
      spec,
      {},
    );
    expect(onCpu).toMatchObject({ source: 'ort-cpu', key: ['dit', 'cpu', 'default'] });
    const onCuda = await createPlatform({ facts: CUDA, kernels, components }).buildComponent(
      spec,
      {},
    );
    expect(onCuda.source).toBe('ort-cpu');
    expect(onCuda.rejected[0]?.reason).toContain('ort-cuda: no CUDA device');
  });
});
