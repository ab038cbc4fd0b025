import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { WebGpuAdapterInfo, WebGpuAdapterProbe } from './webgpu-adapter.js';
import {
  DEVICE_ENV,
  detectPlatform,
  hostProbes,
  ORT_CUDA_PROVIDER_ENV,
  ortCudaProviderPath,
  PLATFORM_OVERRIDE_ENV,
  type PlatformProbes,
} from './detect-platform.js';

const CPUINFO_V3 =
  'flags\t: fpu cx16 lahf_lm popcnt sse4_1 sse4_2 ssse3 avx avx2 bmi1 bmi2 f16c fma abm movbe xsave\n';

/** A box with a CUDA device (compute capability `cap`) and the listed files. */
function probes(options: { cap?: string; files?: string[]; env?: Record<string, string> }) {
  const files = new Set(options.files ?? []);
  const calls: string[] = [];
  const injected: Partial<PlatformProbes> = {
    machine: 'x64',
    os: 'linux',
    env: options.env ?? {},
    readFile: (file) => (file === '/proc/cpuinfo' ? CPUINFO_V3 : undefined),
    exists: (file) => files.has(file),
    execFile: (file, args) => {
      calls.push([file, ...args].join(' '));
      return options.cap === undefined ? undefined : `${options.cap}\n`;
    },
    resolveOrtPackageJson: () => '/ort/package.json',
    webgpuAdapter: () => ({ adapter: undefined, reason: 'no Vulkan driver', probeMs: 0 }),
  };
  return { injected, calls };
}

const PROVIDER = '/ort/bin/napi-v6/linux/x64/libonnxruntime_providers_cuda.so';

describe('detectPlatform', () => {
  it('reports cpu with the x86-64 level that /proc/cpuinfo implies on this box', () => {
    const facts = detectPlatform();
    expect(facts.device).toBe('cpu');
    // An independent reading of /proc/cpuinfo: the level is the last one whose flags all appear.
    const flags = new Set(
      /^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.split(/\s+/),
    );
    const has = (list: string) => list.split(' ').every((f) => flags.has(f));
    let expected = process.arch === 'arm64' ? 'aarch64' : 'generic';
    if (process.arch === 'x64' && has('cx16 lahf_lm popcnt sse4_1 sse4_2 ssse3')) {
      expected = 'x86-64-v2';
      const lzcnt = flags.has('abm') || flags.has('lzcnt');
      if (lzcnt && has('avx avx2 bmi1 bmi2 f16c fma movbe xsave')) {
        expected = 'x86-64-v3';
        if (has('avx512f avx512bw avx512cd avx512dq avx512vl')) expected = 'x86-64-v4';
      }
    }
    expect(facts.arch).toBe(expected);
    expect(facts.cpuArch).toBe(expected);
    for (const feature of facts.features) expect(flags.has(feature)).toBe(true);
  });

  it('probes once per process and returns frozen facts', () => {
    const facts = detectPlatform();
    expect(detectPlatform()).toBe(facts);
    expect(Object.isFrozen(facts)).toBe(true);
    expect(Object.isFrozen(facts.features)).toBe(true);
  });

  it('reports cuda only with a device, a compute capability and the provider library', () => {
    const full = probes({ cap: '9.0', files: ['/dev/nvidia0', PROVIDER] });
    expect(detectPlatform(full.injected)).toMatchObject({
      device: 'cuda',
      arch: 'sm90',
      cpuArch: 'x86-64-v3',
      features: ['compute_cap:9.0', 'ort_cuda_provider'],
    });
    expect(full.calls).toEqual(['nvidia-smi --query-gpu=compute_cap --format=csv,noheader']);

    const noProvider = probes({ cap: '8.6', files: ['/dev/nvidia0'] });
    expect(detectPlatform(noProvider.injected)).toMatchObject({ device: 'cpu', arch: 'x86-64-v3' });
    const noDevice = probes({ cap: '8.6', files: [PROVIDER] });
    expect(detectPlatform(noDevice.injected)).toMatchObject({ device: 'cpu' });
    expect(noDevice.calls).toEqual([]);
    const noSmi = probes({ files: ['/dev/nvidia0', PROVIDER] });
    expect(detectPlatform(noSmi.injected)).toMatchObject({ device: 'cpu' });
  });

  it('takes the provider library path from the environment when given', () => {
    const env = { [ORT_CUDA_PROVIDER_ENV]: '/opt/ort/libonnxruntime_providers_cuda.so' };
    const box = probes({ cap: '12.0', files: ['/dev/nvidia0', env[ORT_CUDA_PROVIDER_ENV]], env });
    expect(detectPlatform(box.injected)).toMatchObject({ device: 'cuda', arch: 'sm120' });
  });

  it('looks for the provider library beside the real onnxruntime-node binding', () => {
    const provider = ortCudaProviderPath(hostProbes());
    expect(provider).toMatch(/libonnxruntime_providers_cuda\.so$/);
    expect(existsSync(join(dirname(provider ?? ''), 'onnxruntime_binding.node'))).toBe(true);
  });

  it('honours the test-only override and says so in features', () => {
    const box = probes({ env: { [PLATFORM_OVERRIDE_ENV]: 'cuda:sm90' } });
    const facts = detectPlatform(box.injected);
    expect(facts).toMatchObject({ device: 'cuda', arch: 'sm90', cpuArch: 'x86-64-v3' });
    expect(facts.features).toContain('override:cuda:sm90');
    expect(box.calls).toEqual([]);
  });

  it('rejects a malformed override', () => {
    for (const [value, code] of [
      ['tpu:v5', 'PLAT_INVALID_OVERRIDE'],
      ['cuda', 'PLAT_INVALID_OVERRIDE'],
      ['cpu:x86-64-v3:extra', 'PLAT_INVALID_OVERRIDE'],
      ['cuda:hopper', 'PLAT_UNKNOWN_ARCH'],
    ] as const) {
      const box = probes({ env: { [PLATFORM_OVERRIDE_ENV]: value } });
      expect(() => detectPlatform(box.injected)).toThrow(expect.objectContaining({ code }));
    }
  });
});

const LAVAPIPE: WebGpuAdapterInfo = {
  vendor: 'mesa',
  architecture: 'software',
  device: 'llvmpipe-llvm-15-0-6-256-bits-',
  description: 'llvmpipe: Mesa 25.0.7-2~bpo12+1 (LLVM 15.0.6) 0.0.1',
  isFallbackAdapter: true,
};
const H100: WebGpuAdapterInfo = {
  vendor: 'nvidia',
  architecture: 'hopper',
  device: '0x2330',
  description: 'NVIDIA H100 80GB HBM3',
  isFallbackAdapter: false,
};

/** A box whose WebGPU adapter request answers `adapter` (or nothing), counting the requests. */
function gpuBox(options: {
  adapter?: WebGpuAdapterInfo;
  device?: string;
  files?: string[];
  cap?: string;
}) {
  const box = probes({
    files: options.files ?? [],
    ...(options.cap === undefined ? {} : { cap: options.cap }),
    env: options.device === undefined ? {} : { [DEVICE_ENV]: options.device },
  });
  let requests = 0;
  const answer: WebGpuAdapterProbe =
    options.adapter === undefined
      ? { adapter: undefined, reason: 'Dawn found no WebGPU adapter', probeMs: 1 }
      : { adapter: options.adapter, probeMs: 1 };
  const injected: Partial<PlatformProbes> = {
    ...box.injected,
    webgpuAdapter: () => {
      requests += 1;
      return answer;
    },
  };
  return { injected, requests: () => requests };
}

describe('detectPlatform with FLOWFLEET_DEVICE', () => {
  it('webgpu: derives the arch from what the adapter says, a software adapter named as such', () => {
    const soft = detectPlatform(gpuBox({ device: 'webgpu', adapter: LAVAPIPE }).injected);
    expect(soft).toMatchObject({ device: 'webgpu', arch: 'software', cpuArch: 'x86-64-v3' });
    expect(soft.features).toEqual([
      'adapter.vendor:mesa',
      'adapter.architecture:software',
      'adapter.device:llvmpipe-llvm-15-0-6-256-bits-',
      'adapter.description:llvmpipe: Mesa 25.0.7-2~bpo12+1 (LLVM 15.0.6) 0.0.1',
      'adapter.fallback',
    ]);
    const real = detectPlatform(gpuBox({ device: 'webgpu', adapter: H100 }).injected);
    expect(real).toMatchObject({ device: 'webgpu', arch: 'nvidia-hopper' });
    expect(real.features).not.toContain('adapter.fallback');
  });

  it('webgpu without an adapter fails with the reason; a bad choice is refused', () => {
    expect(() => detectPlatform(gpuBox({ device: 'webgpu' }).injected)).toThrow(
      expect.objectContaining({
        code: 'PLAT_DEVICE_UNAVAILABLE',
        message: expect.stringMatching(/Dawn found no WebGPU adapter/) as unknown,
      }),
    );
    expect(() => detectPlatform(gpuBox({ device: 'cuda', files: [PROVIDER] }).injected)).toThrow(
      expect.objectContaining({ code: 'PLAT_DEVICE_UNAVAILABLE' }),
    );
    expect(() => detectPlatform(gpuBox({ device: 'tpu' }).injected)).toThrow(
      expect.objectContaining({ code: 'PLAT_INVALID_DEVICE' }),
    );
  });

  it('cpu is cpu even beside a GPU; cuda insists on CUDA', () => {
    const cudaBox = { cap: '9.0', files: ['/dev/nvidia0', PROVIDER], adapter: H100 };
    expect(detectPlatform(gpuBox({ ...cudaBox, device: 'cpu' }).injected).device).toBe('cpu');
    expect(detectPlatform(gpuBox({ ...cudaBox, device: 'cuda' }).injected).arch).toBe('sm90');
  });

  it('auto: cuda, else a hardware adapter behind a GPU device node, else cpu (never software)', () => {
    const noNode = gpuBox({ adapter: H100 });
    expect(detectPlatform(noNode.injected).device).toBe('cpu');
    expect(noNode.requests()).toBe(0);
    const node = gpuBox({ adapter: H100, files: ['/dev/dri/renderD128'] });
    expect(detectPlatform(node.injected)).toMatchObject({
      device: 'webgpu',
      arch: 'nvidia-hopper',
    });
    expect(node.requests()).toBe(1);
    const soft = gpuBox({ adapter: LAVAPIPE, files: ['/dev/dri/renderD128'] });
    expect(detectPlatform(soft.injected).device).toBe('cpu');
    const cuda = gpuBox({ adapter: H100, cap: '9.0', files: ['/dev/nvidia0', PROVIDER] });
    expect(detectPlatform(cuda.injected).device).toBe('cuda');
    expect(cuda.requests()).toBe(0);
  });
});
