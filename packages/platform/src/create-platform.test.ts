import { COMPONENTS, KERNELS, registerComponent, registerKernel } from '@flowfleet/registry';
import { describe, expect, it } from 'vitest';
import { createPlatform } from './create-platform.js';
import { detectPlatform } from './detect-platform.js';

describe('createPlatform', () => {
  it('defaults to the detected facts and the process-wide registries', async () => {
    const fn = () => 'global';
    registerKernel(
      {
        op: 'create_platform_probe',
        device: 'cpu',
        arch: 'generic',
        fn,
        source: 'test',
        workspaceBytes: 0,
      },
      KERNELS,
    );
    registerComponent(
      { kind: 'probe_kind', device: 'cpu', build: () => 'built', source: 'test' },
      COMPONENTS,
    );
    const platform = createPlatform();
    expect(platform.facts).toBe(detectPlatform());
    expect(platform.kernels.get<typeof fn>('create_platform_probe')).toBe(fn);
    const spec = { id: 'p', kind: 'probe_kind', factory: () => 'factory' };
    expect(await platform.buildComponent(spec, undefined)).toMatchObject({
      component: 'built',
      source: 'test',
    });
    expect(
      platform.kernelMatrix().cells.some((row) => row.key['op'] === 'create_platform_probe'),
    ).toBe(true);
    expect(platform.componentMatrix().picks).toContainEqual(
      expect.objectContaining({ name: 'probe_kind', source: 'test' }),
    );
  });
});
