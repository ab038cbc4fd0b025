import { FlowfleetError, isFlowfleetError } from '@flowfleet/errors';
import { createComponentRegistry, registerComponent } from '@flowfleet/registry';
import { describe, expect, it } from 'vitest';
import { createPlatform } from './create-platform.js';
import type { ComponentSpec, PlatformFacts } from './platform-types.js';

interface Built {
  readonly by: string;
  readonly instance: string;
}

const CPU: PlatformFacts = { device: 'cpu', arch: 'generic', features: [], cpuArch: 'generic' };
const CUDA: PlatformFacts = { device: 'cuda', arch: 'sm90', features: [], cpuArch: 'generic' };

function spec(overrides: Partial<ComponentSpec<string, Built>> = {}): ComponentSpec<string, Built> {
  return {
    id: 'tiny/dit',
    kind: 'dit',
    factory: (_spec, instance) => ({ by: 'factory', instance }),
    ...overrides,
  };
}

function builder(by: string) {
  return (_spec: ComponentSpec<string, Built>, instance: string): Built => ({ by, instance });
}

describe('buildComponent', () => {
  it('uses the card factory when nothing is registered', async () => {
    const platform = createPlatform({ facts: CPU, components: createComponentRegistry() });
    const built = await platform.buildComponent(spec(), 'i1');
    expect(built).toEqual({
      component: { by: 'factory', instance: 'i1' },
      source: 'card',
      key: null,
      rejected: [{ key: ['dit', 'cpu', 'default'], reason: 'not registered' }],
    });
  });

  it('walks the device chain: an available cuda builder beats cpu, an unavailable one does not', async () => {
    const components = createComponentRegistry();
    registerComponent(
      { kind: 'dit', device: 'cpu', build: builder('cpu'), source: 'ort-cpu' },
      components,
    );
    let cudaUp = true;
    registerComponent(
      {
        kind: 'dit',
        device: 'cuda',
        build: builder('cuda'),
        source: 'ort-cuda',
        available: () => cudaUp,
      },
      components,
    );
    const platform = createPlatform({ facts: CUDA, components });
    expect(await platform.buildComponent(spec(), 'i')).toMatchObject({
      component: { by: 'cuda' },
      source: 'ort-cuda',
      key: ['dit', 'cuda', 'default'],
    });
    cudaUp = false;
    const fallback = await platform.buildComponent(spec(), 'i');
    expect(fallback).toMatchObject({ component: { by: 'cpu' }, source: 'ort-cpu' });
    expect(fallback.rejected).toEqual([
      { key: ['dit', 'cuda', 'default'], reason: 'availability predicate returned false' },
    ]);
    expect(
      (await createPlatform({ facts: CPU, components }).buildComponent(spec(), 'i')).source,
    ).toBe('ort-cpu');
  });

  it('falls back from a named variant to default on the same device first', async () => {
    const components = createComponentRegistry();
    registerComponent(
      { kind: 'dit', device: 'cuda', build: builder('cuda-default'), source: 's' },
      components,
    );
    registerComponent(
      { kind: 'dit', device: 'cpu', variant: 'fp16', build: builder('cpu-fp16'), source: 's' },
      components,
    );
    const built = await createPlatform({ facts: CUDA, components }).buildComponent(
      spec({ variant: 'fp16' }),
      'i',
    );
    expect(built.component.by).toBe('cuda-default');
    expect(built.rejected).toEqual([{ key: ['dit', 'cuda', 'fp16'], reason: 'not registered' }]);
  });

  it('records a coded builder failure and moves on; a defect propagates', async () => {
    const components = createComponentRegistry();
    registerComponent(
      {
        kind: 'dit',
        device: 'cuda',
        build: () => {
          throw new FlowfleetError('BACK_PROVIDER_UNAVAILABLE', 'cuda provider would not load');
        },
        source: 'ort-cuda',
      },
      components,
    );
    const built = await createPlatform({ facts: CUDA, components }).buildComponent(spec(), 'i');
    expect(built.source).toBe('card');
    expect(built.rejected[0]).toEqual({
      key: ['dit', 'cuda', 'default'],
      reason: 'build failed: BACK_PROVIDER_UNAVAILABLE: cuda provider would not load',
    });

    const broken = createComponentRegistry();
    registerComponent(
      {
        kind: 'dit',
        device: 'cpu',
        build: () => {
          throw new TypeError('bug in builder');
        },
        source: 'ort-cpu',
      },
      broken,
    );
    await expect(
      createPlatform({ facts: CPU, components: broken }).buildComponent(spec(), 'i'),
    ).rejects.toThrow('bug in builder');
  });

  it('throws PLAT_NO_COMPONENT when nothing is available and there is no factory', async () => {
    const components = createComponentRegistry();
    registerComponent(
      { kind: 'dit', device: 'cpu', build: builder('x'), source: 's', available: () => false },
      components,
    );
    const noFactory = { id: 'tiny/dit', kind: 'dit' } as unknown as ComponentSpec<string, Built>;
    try {
      await createPlatform({ facts: CPU, components }).buildComponent(noFactory, 'i');
      expect.unreachable();
    } catch (error) {
      expect(isFlowfleetError(error, 'PLAT_NO_COMPONENT')).toBe(true);
      expect((error as Error).message).toContain(
        '(dit, cpu, default): availability predicate returned false',
      );
    }
  });
});
