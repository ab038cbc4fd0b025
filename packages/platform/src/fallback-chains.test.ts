import { describe, expect, it } from 'vitest';
import {
  archChain,
  componentCandidates,
  deviceArchPairs,
  deviceChain,
  KNOWN_CUDA_ARCHS,
  kernelCandidates,
  X86_64_LEVELS,
} from './fallback-chains.js';

const smNumber = (arch: string) => Number(arch.slice(2));

describe('arch chains', () => {
  it('sm90 → sm90, sm80, ptx, generic', () => {
    expect(archChain('sm90')).toEqual(['sm90', 'sm80', 'ptx', 'generic']);
  });

  it('sm70 excludes every newer arch', () => {
    const chain = archChain('sm70');
    expect(chain).toEqual(['sm70', 'ptx', 'generic']);
    for (const known of [...KNOWN_CUDA_ARCHS, 'sm75', 'sm86', 'sm89']) {
      expect(chain).not.toContain(known);
    }
  });

  it('sm120 keeps sm100, sm90 and sm80, newest first', () => {
    expect(archChain('sm120')).toEqual(['sm120', 'sm100', 'sm90', 'sm80', 'ptx', 'generic']);
  });

  it('orders unlisted smXY archs numerically (sm89 → sm80, sm87 → sm80, sm103 → sm100)', () => {
    expect(archChain('sm89')).toEqual(['sm89', 'sm80', 'ptx', 'generic']);
    expect(archChain('sm75')).toEqual(['sm75', 'ptx', 'generic']);
    expect(archChain('sm87').slice(0, 2)).toEqual(['sm87', 'sm80']);
    expect(archChain('sm103').slice(0, 2)).toEqual(['sm103', 'sm100']);
    expect(archChain('sm60')).toEqual(['sm60', 'ptx', 'generic']);
  });

  it('is monotonic: after the arch itself, only older archs of its family, then terminals', () => {
    for (const arch of [...KNOWN_CUDA_ARCHS, 'sm70', 'sm75', 'sm86', 'sm89', 'sm101']) {
      const chain = archChain(arch);
      const middle = chain.slice(1, -2);
      expect(chain.slice(-2)).toEqual(['ptx', 'generic']);
      for (const older of middle) expect(smNumber(older)).toBeLessThan(smNumber(arch));
      const numbers = middle.map(smNumber);
      expect(numbers).toEqual([...numbers].sort((a, b) => b - a));
    }
    for (const [i, level] of X86_64_LEVELS.entries()) {
      expect(archChain(level)).toEqual([...X86_64_LEVELS.slice(i), 'generic']);
    }
    expect(archChain('x86-64-v2')).toEqual(['x86-64-v2', 'generic']);
    expect(archChain('aarch64')).toEqual(['aarch64', 'generic']);
    expect(archChain('generic')).toEqual(['generic']);
  });

  it('throws PLAT_UNKNOWN_ARCH for an arch of no family', () => {
    for (const arch of ['hopper', 'sm', 'sm9', 'sm90a', 'x86-64-v5', 'SM90', '']) {
      expect(() => archChain(arch)).toThrow(expect.objectContaining({ code: 'PLAT_UNKNOWN_ARCH' }));
    }
  });
});

describe('webgpu arch chains', () => {
  it("are the adapter's arch, then generic; anything else is refused", () => {
    expect(archChain('software', 'webgpu')).toEqual(['software', 'generic']);
    expect(archChain('nvidia-hopper', 'webgpu')).toEqual(['nvidia-hopper', 'generic']);
    expect(archChain('generic', 'webgpu')).toEqual(['generic']);
    for (const arch of ['Nvidia', 'nvidia_hopper', '-x', 'a--b', 'x'.repeat(65), '']) {
      expect(() => archChain(arch, 'webgpu')).toThrow(
        expect.objectContaining({ code: 'PLAT_UNKNOWN_ARCH' }),
      );
    }
    // A webgpu arch is no cpu or cuda arch.
    expect(() => archChain('software')).toThrow(
      expect.objectContaining({ code: 'PLAT_UNKNOWN_ARCH' }),
    );
  });

  it('walk the adapter arch, then the host cpu', () => {
    const origin = { device: 'webgpu', arch: 'software', cpuArch: 'x86-64-v3' } as const;
    expect(deviceArchPairs(origin)).toEqual([
      ['webgpu', 'software'],
      ['webgpu', 'generic'],
      ['cpu', 'x86-64-v3'],
      ['cpu', 'x86-64-v2'],
      ['cpu', 'generic'],
    ]);
  });
});

describe('candidate order', () => {
  it('device chains end in cpu', () => {
    expect(deviceChain('cuda')).toEqual(['cuda', 'cpu']);
    expect(deviceChain('webgpu')).toEqual(['webgpu', 'cpu']);
    expect(deviceChain('cpu')).toEqual(['cpu']);
  });

  it('walks device > arch > variant, the cpu rungs from the host cpu arch', () => {
    const origin = { device: 'cuda', arch: 'sm80', cpuArch: 'x86-64-v2' } as const;
    expect(kernelCandidates('op', 'fast', origin).map((key) => key.join('/'))).toEqual([
      'op/cuda/sm80/fast',
      'op/cuda/sm80/default',
      'op/cuda/ptx/fast',
      'op/cuda/ptx/default',
      'op/cuda/generic/fast',
      'op/cuda/generic/default',
      'op/cpu/x86-64-v2/fast',
      'op/cpu/x86-64-v2/default',
      'op/cpu/generic/fast',
      'op/cpu/generic/default',
    ]);
    expect(
      kernelCandidates('op', 'default', { ...origin, device: 'cpu', arch: 'generic' }),
    ).toEqual([['op', 'cpu', 'generic', 'default']]);
  });

  it('component candidates walk device > variant', () => {
    expect(componentCandidates('dit', 'fp16', 'cuda')).toEqual([
      ['dit', 'cuda', 'fp16'],
      ['dit', 'cuda', 'default'],
      ['dit', 'cpu', 'fp16'],
      ['dit', 'cpu', 'default'],
    ]);
  });
});
