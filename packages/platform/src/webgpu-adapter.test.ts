import { describe, expect, it } from 'vitest';
import { archChain } from './fallback-chains.js';
import {
  isSoftwareAdapter,
  requestWebGpuAdapter,
  webgpuArch,
  webgpuModuleUrl,
  type WebGpuAdapterInfo,
} from './webgpu-adapter.js';

const info = (overrides: Partial<WebGpuAdapterInfo>): WebGpuAdapterInfo => ({
  vendor: '',
  architecture: '',
  device: '',
  description: '',
  isFallbackAdapter: false,
  ...overrides,
});

describe('webgpuArch', () => {
  it('names every software adapter `software`, whichever way it says so', () => {
    for (const adapter of [
      info({ vendor: 'mesa', architecture: 'software', isFallbackAdapter: true }),
      info({ vendor: 'mesa', device: 'llvmpipe (LLVM 15.0.6, 256 bits)' }),
      info({ vendor: 'google', description: 'SwiftShader Device (Subzero)' }),
      info({ vendor: 'nvidia', architecture: 'hopper', isFallbackAdapter: true }),
    ]) {
      expect(isSoftwareAdapter(adapter)).toBe(true);
      expect(webgpuArch(adapter)).toBe('software');
    }
  });

  it('names a hardware adapter <vendor>-<architecture>, a valid webgpu arch', () => {
    expect(webgpuArch(info({ vendor: 'nvidia', architecture: 'hopper' }))).toBe('nvidia-hopper');
    expect(webgpuArch(info({ vendor: 'AMD', architecture: 'RDNA 3' }))).toBe('amd-rdna-3');
    expect(webgpuArch(info({ vendor: 'intel', architecture: 'gen-12lp' }))).toBe('intel-gen-12lp');
    expect(webgpuArch(info({ vendor: 'apple' }))).toBe('apple');
    expect(webgpuArch(info({}))).toBe('gpu');
    const long = webgpuArch(info({ vendor: 'v'.repeat(80), architecture: 'a-b c' }));
    for (const arch of ['nvidia-hopper', 'amd-rdna-3', long, 'software']) {
      expect(archChain(arch, 'webgpu')).toEqual([arch, 'generic']);
    }
  });
});

describe('requestWebGpuAdapter (a real child process)', () => {
  it('answers an adapter or a reason, never throws; without Vulkan drivers it gives the reason', () => {
    const probe = requestWebGpuAdapter(process.env);
    if (probe.adapter === undefined) expect(probe.reason.length).toBeGreaterThan(0);
    else expect(typeof probe.adapter.vendor).toBe('string');
    // No Vulkan driver files: Dawn finds no adapter, and the reason says so.
    const none = requestWebGpuAdapter({
      ...process.env,
      VK_DRIVER_FILES: '/nonexistent.json',
      VK_ICD_FILENAMES: '/nonexistent.json',
    });
    expect(none.adapter).toBeUndefined();
    expect(none).toMatchObject({ reason: expect.stringMatching(/no WebGPU adapter/) as unknown });
    expect(webgpuModuleUrl()).toMatch(/^file:.*webgpu/);
    expect(requestWebGpuAdapter(process.env, 'file:///nonexistent/webgpu.js')).toMatchObject({
      reason: expect.stringMatching(/request failed/) as unknown,
    });
  }, 60_000);
});
