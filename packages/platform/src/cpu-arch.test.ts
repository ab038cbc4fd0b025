import { describe, expect, it } from 'vitest';
import { classifyCpu, parseCpuinfoFlags } from './cpu-arch.js';

const V2 = ['cx16', 'lahf_lm', 'popcnt', 'sse4_1', 'sse4_2', 'ssse3'];
const V3 = ['avx', 'avx2', 'bmi1', 'bmi2', 'f16c', 'fma', 'abm', 'movbe', 'xsave'];
const V4 = ['avx512f', 'avx512bw', 'avx512cd', 'avx512dq', 'avx512vl'];

describe('classifyCpu', () => {
  it('names the highest x86-64 level whose flags are all present', () => {
    expect(classifyCpu(['fpu', 'sse2'], 'x64').arch).toBe('generic');
    expect(classifyCpu(V2, 'x64').arch).toBe('x86-64-v2');
    expect(classifyCpu([...V2, ...V3], 'x64').arch).toBe('x86-64-v3');
    expect(classifyCpu([...V2, ...V3, ...V4], 'x64').arch).toBe('x86-64-v4');
  });

  it('needs every flag of the lower levels and of the level itself', () => {
    expect(classifyCpu([...V2.slice(1), ...V3, ...V4], 'x64').arch).toBe('generic');
    expect(classifyCpu([...V2, ...V3.filter((f) => f !== 'movbe'), ...V4], 'x64').arch).toBe(
      'x86-64-v2',
    );
    expect(classifyCpu([...V2, ...V3, ...V4.slice(0, 4)], 'x64').arch).toBe('x86-64-v3');
  });

  it('accepts lzcnt under either spelling (Linux shows abm)', () => {
    const withLzcnt = [...V2, ...V3.filter((f) => f !== 'abm'), 'lzcnt'];
    expect(classifyCpu(withLzcnt, 'x64').arch).toBe('x86-64-v3');
    expect(classifyCpu([...V2, ...V3.filter((f) => f !== 'abm')], 'x64').arch).toBe('x86-64-v2');
  });

  it('reports only the relevant flags as features', () => {
    const { features } = classifyCpu(['fpu', 'sse2', ...V2, 'avx'], 'x64');
    expect([...features].sort()).toEqual([...V2, 'avx'].sort());
  });

  it('calls arm64 aarch64 and any other machine generic', () => {
    expect(classifyCpu(['asimd', 'fp'], 'arm64')).toEqual({ arch: 'aarch64', features: ['asimd'] });
    expect(classifyCpu(V2, 'riscv64')).toEqual({ arch: 'generic', features: [] });
  });

  it('parses the flags (x86) or Features (arm) line of /proc/cpuinfo', () => {
    expect(parseCpuinfoFlags('processor\t: 0\nflags\t\t: fpu sse2  avx\nbugs\t: x\n')).toEqual([
      'fpu',
      'sse2',
      'avx',
    ]);
    expect(parseCpuinfoFlags('processor : 0\nFeatures : fp asimd\n')).toEqual(['fp', 'asimd']);
    expect(parseCpuinfoFlags('')).toEqual([]);
  });
});
