import { archAtLeast, isArchReachable, isSoftwareAdapterPlatform } from './arch.js';
import type { Requirements } from './requirements.js';
import type { WorkerManifest } from './worker-manifest.js';

/** Whether a worker can serve a lane, and if not every reason why. */
export type Satisfaction =
  { readonly ok: true } | { readonly ok: false; readonly reasons: string[] };

/** The devices a worker's KernelTable resolves along (DESIGN §2: `cuda → cpu`, `cpu`). */
function deviceChain(device: string): readonly string[] {
  return device === 'cpu' ? ['cpu'] : [device, 'cpu'];
}

/**
 * Why a worker on `platform` cannot serve `requirements` by its platform alone (empty: it can):
 * its device must be allowed, its arch must meet that device's minArch, and its adapter must be of
 * the kind the job accepts. What a configured device class is matched on before any worker of it
 * registered (the coordinator's scaling planner), and the platform half of `manifestSatisfies`.
 */
export function platformReasons(
  platform: { readonly device: string; readonly arch: string },
  requirements: Requirements,
): string[] {
  const reasons: string[] = [];
  const { device, arch } = platform;
  if (!(requirements.devices as readonly string[]).includes(device)) {
    reasons.push(`device '${device}' is not allowed (allowed: ${requirements.devices.join(', ')})`);
  } else {
    const min = device === 'cpu' || device === 'cuda' ? requirements.minArch[device] : undefined;
    if (min !== undefined && !archAtLeast(arch, min)) {
      reasons.push(`arch '${arch}' is below the minimum '${min}' for ${device}`);
    }
  }
  const software = isSoftwareAdapterPlatform(platform);
  if (requirements.adapter === 'hardware' && software) {
    reasons.push(`adapter '${device}/${arch}' is a software adapter; the job asks for hardware`);
  } else if (requirements.adapter === 'software' && !software) {
    reasons.push(`'${device}/${arch}' is no software adapter; the job asks for one`);
  }
  return reasons;
}

/**
 * Whether `manifest` satisfies `requirements`, listing every unmet condition:
 * - the model is listed in `models`;
 * - the worker's device is allowed, and its arch meets that device's minArch (same family, not
 *   older);
 * - the worker's adapter is of the kind the job accepts (`hardware` excludes a webgpu worker on a
 *   software adapter, `software` takes only such a worker);
 * - every op has an available `default`-variant kernel cell that the worker's KernelTable would
 *   reach: on its device chain (a cuda worker may fall back to cpu kernels) at an arch on its arch
 *   chain (its own, an older one of the family, or a portable terminal).
 * Component kinds need no cell: a worker that lists the model can always build them through the
 * card's TS reference factory, the terminal rung. Weight versions are not checked (a worker syncs
 * before it starts a job that needs newer weights).
 */
export function manifestSatisfies(
  manifest: WorkerManifest,
  requirements: Requirements,
): Satisfaction {
  const reasons: string[] = [];
  const { device, arch } = manifest.platform;
  if (!manifest.models.includes(requirements.model)) {
    reasons.push(
      `model '${requirements.model}' is not listed (worker has: ${manifest.models.join(', ') || 'none'})`,
    );
  }
  reasons.push(...platformReasons(manifest.platform, requirements));
  const chain = deviceChain(device);
  const workerArchOn = (d: string): string | undefined =>
    d === device ? arch : d === 'cpu' ? manifest.platform.cpuArch : undefined;
  for (const op of requirements.ops) {
    const cells = manifest.kernels.filter((row) => row.key.op === op);
    const reachable = cells.filter(
      (row) =>
        chain.includes(row.key.device ?? '') &&
        (row.key.variant ?? 'default') === 'default' &&
        isArchReachable(
          row.key.device ?? '',
          row.key.arch ?? '',
          workerArchOn(row.key.device ?? ''),
        ),
    );
    if (reachable.some((row) => row.available)) continue;
    if (reachable.length === 0) {
      reasons.push(`no kernel for op '${op}' on ${chain.join(' → ')} at arch '${arch}'`);
    } else {
      const why = reachable.map(
        (row) => `${row.key.device}/${row.key.arch}: ${row.reason ?? 'unavailable'}`,
      );
      reasons.push(`kernel for op '${op}' is unavailable (${why.join('; ')})`);
    }
  }
  return reasons.length === 0 ? { ok: true } : { ok: false, reasons };
}
