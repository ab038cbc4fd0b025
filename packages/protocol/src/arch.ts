import { z } from 'zod';

// Arch strings as the platform reports them (DESIGN §2): cpu is an x86-64 level
// (`x86-64-v4`/`v3`/`v2`/`generic`) or `aarch64`; cuda is `sm<major><minor>`; webgpu is what the
// adapter says, `software` for an emulated adapter, else `<vendor>[-<architecture>]`. Protocol
// may not import @flowfleet/platform, so the ordering rules live here too; they are part of the
// wire contract (a lane's minArch is compared against a manifest's arch).

const X86_LEVELS = ['generic', 'x86-64-v2', 'x86-64-v3', 'x86-64-v4'] as const;
const SM = /^sm(\d{2,3})$/;

/** A minimum cpu arch: an x86-64 level, `generic` (no minimum) or `aarch64`. */
export const CpuArchSchema = z.enum([...X86_LEVELS, 'aarch64']);
/** A minimum cuda arch: `sm<major><minor>`, e.g. `sm80`, `sm90`, `sm100`. */
export const CudaArchSchema = z
  .string()
  .regex(SM, 'a cuda arch is sm<major><minor>, e.g. sm80, sm90, sm100');

/**
 * The minimum arch per device. Webgpu has no ladder (adapters of different vendors are not
 * ordered): a job says whether it takes software adapters with `constraints.adapter` instead.
 */
export const MinArchSchema = z.strictObject({
  cpu: CpuArchSchema.optional(),
  cuda: CudaArchSchema.optional(),
});
/** The minimum arch per device. */
export type MinArch = z.infer<typeof MinArchSchema>;

/** Portable terminal archs every worker of a device can run (DESIGN §2 arch chain). */
const TERMINALS: Readonly<Record<string, readonly string[]>> = {
  cpu: ['generic'],
  cuda: ['ptx', 'generic'],
  webgpu: ['generic'],
};

/**
 * True when a worker whose arch is `have` meets the minimum `min`: same family and not older.
 * x86-64 levels are ordered (`generic` < v2 < v3 < v4), `smXY` compare numerically, `aarch64`
 * only equals itself; `generic` as a minimum means "any".
 */
export function archAtLeast(have: string, min: string): boolean {
  if (min === 'generic' || have === min) return true;
  const haveLevel = (X86_LEVELS as readonly string[]).indexOf(have);
  const minLevel = (X86_LEVELS as readonly string[]).indexOf(min);
  if (haveLevel >= 0 && minLevel >= 0) return haveLevel >= minLevel;
  const haveSm = SM.exec(have)?.[1];
  const minSm = SM.exec(min)?.[1];
  if (haveSm !== undefined && minSm !== undefined) return Number(haveSm) >= Number(minSm);
  return false;
}

/**
 * True when a kernel cell registered at `cellArch` on `device` is on the arch chain of a worker
 * whose arch on that device is `workerArch`: the same arch or an older one of its family, or a
 * portable terminal. Never a newer arch. `workerArch` undefined (unknown) admits terminals only.
 */
export function isArchReachable(
  device: string,
  cellArch: string,
  workerArch: string | undefined,
): boolean {
  if ((TERMINALS[device] ?? []).includes(cellArch)) return true;
  return workerArch !== undefined && archAtLeast(workerArch, cellArch);
}

/** The arch of a webgpu worker on a software (emulated) adapter: lavapipe, SwiftShader, WARP. */
export const SOFTWARE_ADAPTER_ARCH = 'software';

/**
 * Which adapters a job accepts: `any` (the default), `hardware` (no software adapter: a real GPU,
 * or the CPU itself), or `software` (only a webgpu worker on an emulated adapter, e.g. to test
 * the GPU path on a machine without one; needs `webgpu` among the allowed devices).
 */
export const AdapterSchema = z.enum(['any', 'hardware', 'software']);
/** Which adapters a job accepts. */
export type Adapter = z.infer<typeof AdapterSchema>;

/** True when a worker's platform is a software adapter (webgpu on `software`). */
export function isSoftwareAdapterPlatform(platform: { device: string; arch: string }): boolean {
  return platform.device === 'webgpu' && platform.arch === SOFTWARE_ADAPTER_ARCH;
}
