import { describe, expect, it } from 'vitest';
import { archAtLeast, isArchReachable } from './arch.js';
import { manifestSatisfies, platformReasons } from './manifest-satisfies.js';
import type { Requirements } from './requirements.js';
import { WorkerManifestSchema, type ManifestRow, type WorkerManifest } from './worker-manifest.js';

const kernel = (
  op: string,
  device: string,
  arch: string,
  available = true,
  variant = 'default',
): ManifestRow => ({
  registry: 'KERNELS',
  key: { op, device, arch, variant },
  available,
  ...(available ? {} : { reason: 'availability predicate returned false' }),
  source: device === 'cpu' ? 'cpu' : 'ort-cuda',
  meta: { workspaceBytes: 0 },
});

const CPU_KERNELS = ['flow_match_step', 'flow_sde_step', 'cfg_combine'].map((op) =>
  kernel(op, 'cpu', 'generic'),
);

const manifest = (patch: Partial<WorkerManifest> = {}): WorkerManifest =>
  WorkerManifestSchema.parse({
    workerId: 'w-1',
    host: 'box',
    pid: 42,
    platform: { device: 'cpu', arch: 'x86-64-v3', features: ['avx2'] },
    kernels: CPU_KERNELS,
    components: [],
    models: ['wan21-mini'],
    concurrency: 2,
    weights: { dit: 3, text_encoder: 0 },
    startedAt: '2026-11-30T05:35:00.000Z',
    version: '0.1.0',
    ...patch,
  });

const REQS: Requirements = {
  model: 'wan21-mini',
  ops: ['cfg_combine', 'flow_sde_step'],
  components: ['dit', 'text_encoder'],
  devices: ['cpu', 'cuda'],
  minArch: {},
  dtype: 'float32',
};

function reasonsOf(m: WorkerManifest, r: Requirements): string[] {
  const result = manifestSatisfies(m, r);
  return result.ok ? [] : result.reasons;
}

describe('manifestSatisfies', () => {
  it('accepts a worker with the model and available kernels (components via the card)', () => {
    expect(manifestSatisfies(manifest(), REQS)).toEqual({ ok: true });
  });

  it('rejects a device the job does not allow', () => {
    expect(reasonsOf(manifest(), { ...REQS, devices: ['cuda'] })).toEqual([
      "device 'cpu' is not allowed (allowed: cuda)",
    ]);
  });

  it('rejects an arch below minArch, and a different family', () => {
    expect(reasonsOf(manifest(), { ...REQS, minArch: { cpu: 'x86-64-v4' } })).toEqual([
      "arch 'x86-64-v3' is below the minimum 'x86-64-v4' for cpu",
    ]);
    expect(manifestSatisfies(manifest(), { ...REQS, minArch: { cpu: 'x86-64-v2' } }).ok).toBe(true);
    const arm = manifest({ platform: { device: 'cpu', arch: 'aarch64', features: [] } });
    expect(manifestSatisfies(arm, { ...REQS, minArch: { cpu: 'aarch64' } }).ok).toBe(true);
    expect(reasonsOf(arm, { ...REQS, minArch: { cpu: 'x86-64-v2' } })).toHaveLength(1);
  });

  it('serves a webgpu worker on its cpu kernels, and honours the adapter kind a job asks for', () => {
    const platform = (arch: string) => ({
      device: 'webgpu' as const,
      arch,
      features: [],
      cpuArch: 'x86-64-v3',
    });
    const software = manifest({ platform: platform('software') });
    const hardware = manifest({ platform: platform('nvidia-hopper') });
    const webgpu: Requirements = { ...REQS, devices: ['webgpu'] };
    expect(manifestSatisfies(software, webgpu)).toEqual({ ok: true });
    expect(manifestSatisfies(hardware, webgpu)).toEqual({ ok: true });
    expect(reasonsOf(software, { ...webgpu, adapter: 'hardware' })).toEqual([
      "adapter 'webgpu/software' is a software adapter; the job asks for hardware",
    ]);
    expect(manifestSatisfies(hardware, { ...webgpu, adapter: 'hardware' }).ok).toBe(true);
    expect(manifestSatisfies(software, { ...webgpu, adapter: 'software' }).ok).toBe(true);
    expect(reasonsOf(hardware, { ...webgpu, adapter: 'software' })).toEqual([
      "'webgpu/nvidia-hopper' is no software adapter; the job asks for one",
    ]);
    // The CPU is hardware; a cpu worker never serves a job that wants a software adapter.
    expect(manifestSatisfies(manifest(), { ...REQS, adapter: 'hardware' }).ok).toBe(true);
    expect(
      reasonsOf(manifest(), { ...REQS, devices: ['cpu', 'webgpu'], adapter: 'software' }),
    ).toEqual(["'cpu/x86-64-v3' is no software adapter; the job asks for one"]);
  });

  it('matches a platform alone (a configured class) on device, minArch and adapter', () => {
    const webgpu: Requirements = { ...REQS, devices: ['webgpu'] };
    const software = { device: 'webgpu', arch: 'software' };
    expect(platformReasons(software, webgpu)).toEqual([]);
    expect(platformReasons(software, { ...webgpu, adapter: 'hardware' })).toHaveLength(1);
    expect(platformReasons({ device: 'webgpu', arch: 'amd-rdna-3' }, webgpu)).toEqual([]);
    expect(platformReasons({ device: 'cpu', arch: 'x86-64-v2' }, webgpu)).toEqual([
      "device 'cpu' is not allowed (allowed: webgpu)",
    ]);
  });

  it('compares cuda archs numerically', () => {
    const gpu = (arch: string) =>
      manifest({
        platform: { device: 'cuda', arch, features: [], cpuArch: 'x86-64-v3' },
      });
    const reqs: Requirements = { ...REQS, minArch: { cuda: 'sm90' } };
    expect(manifestSatisfies(gpu('sm100'), reqs).ok).toBe(true);
    expect(manifestSatisfies(gpu('sm90'), reqs).ok).toBe(true);
    expect(reasonsOf(gpu('sm86'), reqs)).toEqual([
      "arch 'sm86' is below the minimum 'sm90' for cuda",
    ]);
  });

  it('rejects a missing kernel', () => {
    const m = manifest({ kernels: CPU_KERNELS.filter((row) => row.key.op !== 'cfg_combine') });
    expect(reasonsOf(m, REQS)).toEqual([
      "no kernel for op 'cfg_combine' on cpu at arch 'x86-64-v3'",
    ]);
  });

  it('rejects an unavailable kernel and says why', () => {
    const m = manifest({
      kernels: [
        ...CPU_KERNELS.filter((row) => row.key.op !== 'flow_sde_step'),
        kernel('flow_sde_step', 'cpu', 'generic', false),
      ],
    });
    expect(reasonsOf(m, REQS)).toEqual([
      "kernel for op 'flow_sde_step' is unavailable (cpu/generic: availability predicate returned false)",
    ]);
  });

  it('ignores kernels the worker would never resolve (newer arch, other device, named variant)', () => {
    const m = manifest({
      kernels: [
        kernel('cfg_combine', 'cpu', 'generic'),
        kernel('flow_sde_step', 'cpu', 'x86-64-v4'),
        kernel('flow_sde_step', 'cuda', 'sm90'),
        kernel('flow_sde_step', 'cpu', 'generic', true, 'fast'),
      ],
    });
    expect(reasonsOf(m, REQS)).toEqual([
      "no kernel for op 'flow_sde_step' on cpu at arch 'x86-64-v3'",
    ]);
    const older = manifest({
      kernels: [
        kernel('cfg_combine', 'cpu', 'generic'),
        kernel('flow_sde_step', 'cpu', 'x86-64-v2'),
      ],
    });
    expect(manifestSatisfies(older, REQS).ok).toBe(true);
  });

  it('lets a cuda worker fall back to cpu kernels at its host cpu arch', () => {
    const gpu = manifest({
      platform: { device: 'cuda', arch: 'sm90', features: [], cpuArch: 'x86-64-v3' },
      kernels: [kernel('cfg_combine', 'cuda', 'sm80'), kernel('flow_sde_step', 'cpu', 'x86-64-v3')],
    });
    expect(manifestSatisfies(gpu, REQS).ok).toBe(true);
    const noCpuArch = manifest({
      platform: { device: 'cuda', arch: 'sm90', features: [] },
      kernels: gpu.kernels,
    });
    expect(reasonsOf(noCpuArch, REQS)).toHaveLength(1);
  });

  it('rejects a worker that does not list the model, listing every reason', () => {
    const m = manifest({ models: ['other'], kernels: [] });
    expect(reasonsOf(m, { ...REQS, devices: ['cuda'] })).toEqual([
      "model 'wan21-mini' is not listed (worker has: other)",
      "device 'cpu' is not allowed (allowed: cuda)",
      "no kernel for op 'cfg_combine' on cpu at arch 'x86-64-v3'",
      "no kernel for op 'flow_sde_step' on cpu at arch 'x86-64-v3'",
    ]);
  });
});

describe('arch ordering', () => {
  it.each([
    ['x86-64-v4', 'x86-64-v3', true],
    ['x86-64-v2', 'x86-64-v3', false],
    ['generic', 'x86-64-v2', false],
    ['aarch64', 'generic', true],
    ['aarch64', 'aarch64', true],
    ['x86-64-v4', 'aarch64', false],
    ['sm100', 'sm90', true],
    ['sm90', 'sm100', false],
    ['sm90', 'x86-64-v2', false],
  ])('archAtLeast(%s, %s) is %s', (have, min, expected) => {
    expect(archAtLeast(have, min)).toBe(expected);
  });

  it('reaches portable terminals but never a newer arch', () => {
    expect(isArchReachable('cuda', 'ptx', 'sm70')).toBe(true);
    expect(isArchReachable('cpu', 'generic', undefined)).toBe(true);
    expect(isArchReachable('cpu', 'x86-64-v2', undefined)).toBe(false);
    expect(isArchReachable('cuda', 'sm90', 'sm80')).toBe(false);
  });
});
