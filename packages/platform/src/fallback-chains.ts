import { FlowfleetError } from '@flowfleet/errors';
import { DEFAULT_VARIANT } from '@flowfleet/registry';
import type { Device } from './platform-types.js';

/**
 * The CUDA archs backends compile cells for, newest first: Ampere (sm80), Hopper (sm90) and
 * Blackwell (sm100, sm120). sm86/sm89 run sm80 code, so nobody ships separate cells for them;
 * pre-Ampere archs (sm70, sm75) lack bf16 and the attention kernels modern DiTs use, so they get
 * the portable rungs only. Hence sm90 → sm90, sm80, ptx, generic. Unlisted `smXY` archs are still
 * valid and ordered numerically (sm89 → sm89, sm80, …; sm75 → sm75, ptx, generic).
 */
export const KNOWN_CUDA_ARCHS: readonly string[] = Object.freeze([
  'sm120',
  'sm100',
  'sm90',
  'sm80',
]);

/** x86-64 levels, newest first; `generic` is the baseline below them. */
export const X86_64_LEVELS: readonly string[] = Object.freeze([
  'x86-64-v4',
  'x86-64-v3',
  'x86-64-v2',
]);

/** The portable terminals every arch chain may end in (`ptx` only after a cuda arch). */
export const PORTABLE_ARCHS: readonly string[] = Object.freeze(['ptx', 'generic']);

const CUDA_ARCH = /^sm[1-9]\d+$/;

/**
 * A webgpu arch: what the adapter says, as `webgpu-adapter.ts` derives it — `software` for an
 * emulated adapter, else `<vendor>[-<architecture>]` in lowercase `[a-z0-9-]` (`nvidia-hopper`).
 * Adapters of different vendors are not ordered, so a webgpu chain is the arch, then `generic`.
 */
const WEBGPU_ARCH = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const WEBGPU_ARCH_MAX_CHARS = 64;

/** The device chain: the device itself, then `cpu`. */
export function deviceChain(device: Device): readonly Device[] {
  return device === 'cpu' ? ['cpu'] : [device, 'cpu'];
}

/**
 * The arch chain for `arch` (on `device`, when known): itself, then only older archs of its
 * family (newest first), then the portable terminals. Never a newer arch. On webgpu an arch is
 * the adapter's (`software`, `nvidia-hopper`): itself, then `generic`.
 * @throws FlowfleetError PLAT_UNKNOWN_ARCH when `arch` belongs to no known family
 */
export function archChain(arch: string, device?: Device): readonly string[] {
  if (arch === 'generic') return ['generic'];
  if (device === 'webgpu') {
    if (WEBGPU_ARCH.test(arch) && arch.length <= WEBGPU_ARCH_MAX_CHARS) return [arch, 'generic'];
    throw new FlowfleetError(
      'PLAT_UNKNOWN_ARCH',
      `unknown webgpu arch '${arch}': expected 'software' or '<vendor>[-<architecture>]' in [a-z0-9-]`,
      { details: { arch, device } },
    );
  }
  if (arch === 'ptx') return ['ptx', 'generic'];
  if (arch === 'aarch64') return ['aarch64', 'generic'];
  const level = X86_64_LEVELS.indexOf(arch);
  if (level >= 0) return [...X86_64_LEVELS.slice(level), 'generic'];
  if (CUDA_ARCH.test(arch)) {
    const number = cudaArchNumber(arch);
    const older = KNOWN_CUDA_ARCHS.filter((known) => cudaArchNumber(known) < number);
    return [arch, ...older, ...PORTABLE_ARCHS];
  }
  throw new FlowfleetError(
    'PLAT_UNKNOWN_ARCH',
    `unknown arch '${arch}': expected an x86-64 level, aarch64, smXY, ptx, generic, or a webgpu adapter's arch on webgpu`,
    { details: { arch } },
  );
}

/** `sm90` → 90, `sm120` → 120: CUDA archs compare as numbers. */
function cudaArchNumber(arch: string): number {
  return Number(arch.slice(2));
}

/** Where the candidate walk starts: the platform's device and arch, and the host CPU's arch. */
export interface ChainOrigin {
  readonly device: Device;
  readonly arch: string;
  /** The arch walked once the device chain reaches `cpu` from another device. */
  readonly cpuArch: string;
}

/** The (device, arch) pairs in fallback order: device > arch. */
export function deviceArchPairs(origin: ChainOrigin): readonly (readonly [Device, string])[] {
  const pairs: (readonly [Device, string])[] = [];
  for (const device of deviceChain(origin.device)) {
    const arch =
      device === origin.device ? origin.arch : device === 'cpu' ? origin.cpuArch : 'generic';
    for (const rung of archChain(arch, device)) pairs.push([device, rung]);
  }
  return pairs;
}

/** The variants tried at each rung: the named one, then `default`. */
export function variantChain(variant: string): readonly string[] {
  return variant === DEFAULT_VARIANT ? [DEFAULT_VARIANT] : [variant, DEFAULT_VARIANT];
}

/**
 * KERNELS candidate keys (op, device, arch, variant) in order device > arch > variant.
 * @throws FlowfleetError PLAT_UNKNOWN_ARCH
 */
export function kernelCandidates(
  op: string,
  variant: string,
  origin: ChainOrigin,
): readonly (readonly string[])[] {
  return deviceArchPairs(origin).flatMap(([device, arch]) =>
    variantChain(variant).map((v) => [op, device, arch, v] as const),
  );
}

/** COMPONENTS candidate keys (kind, device, variant) in order device > variant. */
export function componentCandidates(
  kind: string,
  variant: string,
  device: Device,
): readonly (readonly string[])[] {
  return deviceChain(device).flatMap((d) =>
    variantChain(variant).map((v) => [kind, d, v] as const),
  );
}
