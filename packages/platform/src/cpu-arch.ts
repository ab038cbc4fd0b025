/** A CPU verdict: the arch rung and the flags that earned it. */
export interface CpuClassification {
  readonly arch: string;
  readonly features: readonly string[];
}

// x86-64 micro-architecture levels (psABI). Each level also needs every flag of the levels below.
// Linux reports LZCNT as `abm` on both vendors, so either spelling satisfies `lzcnt`.
const X86_V2 = ['cx16', 'lahf_lm', 'popcnt', 'sse4_1', 'sse4_2', 'ssse3'] as const;
const X86_V3 = ['avx', 'avx2', 'bmi1', 'bmi2', 'f16c', 'fma', 'lzcnt', 'movbe', 'xsave'] as const;
const X86_V4 = ['avx512f', 'avx512bw', 'avx512cd', 'avx512dq', 'avx512vl'] as const;
const FLAG_ALIASES: Readonly<Record<string, readonly string[]>> = { lzcnt: ['lzcnt', 'abm'] };

/** aarch64 flags worth reporting (what a kernel variant might key on). */
const AARCH64_FLAGS = [
  'asimd',
  'asimdhp',
  'asimddp',
  'fphp',
  'atomics',
  'sve',
  'sve2',
  'bf16',
  'i8mm',
];

/** The flags of the first `flags` (x86) or `Features` (arm) line of /proc/cpuinfo. */
export function parseCpuinfoFlags(cpuinfo: string): string[] {
  const line = /^(?:flags|Features)\s*:(.*)$/m.exec(cpuinfo);
  return line?.[1]?.trim().split(/\s+/).filter(Boolean) ?? [];
}

/**
 * Classifies a CPU from its flags. `machine` is Node's `process.arch` (`x64`, `arm64`, …): x64
 * gets the highest x86-64 level whose flags are all present, arm64 is `aarch64`, anything else
 * is `generic`. `features` lists the relevant flags found, in level order.
 */
export function classifyCpu(flags: Iterable<string>, machine: string): CpuClassification {
  const have = new Set(flags);
  if (machine === 'arm64') {
    return { arch: 'aarch64', features: AARCH64_FLAGS.filter((flag) => have.has(flag)) };
  }
  if (machine !== 'x64') return { arch: 'generic', features: [] };

  const present = (flag: string): boolean =>
    (FLAG_ALIASES[flag] ?? [flag]).some((name) => have.has(name));
  const features: string[] = [];
  for (const flag of [...X86_V2, ...X86_V3, ...X86_V4]) {
    for (const name of FLAG_ALIASES[flag] ?? [flag]) if (have.has(name)) features.push(name);
  }
  let arch = 'generic';
  if (X86_V2.every(present)) {
    arch = 'x86-64-v2';
    if (X86_V3.every(present)) {
      arch = 'x86-64-v3';
      if (X86_V4.every(present)) arch = 'x86-64-v4';
    }
  }
  return { arch, features };
}
