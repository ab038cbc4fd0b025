import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { FlowfleetError } from '@flowfleet/errors';
import { classifyCpu, parseCpuinfoFlags } from './cpu-arch.js';
import { archChain } from './fallback-chains.js';
import { isDevice, type PlatformFacts } from './platform-types.js';

/**
 * Test-only: `FLOWFLEET_PLATFORM_OVERRIDE=device:arch` (e.g. `cuda:sm90`) makes detection report
 * that platform instead of the real one, so a test fleet can advertise lanes it cannot serve.
 * The facts then carry `override:<value>` in `features`. Never set it in production.
 */
export const PLATFORM_OVERRIDE_ENV = 'FLOWFLEET_PLATFORM_OVERRIDE';

/** Path of an onnxruntime CUDA provider library, when it is not next to the binding. */
export const ORT_CUDA_PROVIDER_ENV = 'FLOWFLEET_ORT_CUDA_PROVIDER';

/** The side-effect-free probes detection runs; each answers with a fact or nothing. */
export interface PlatformProbes {
  /** Node's `process.arch` (`x64`, `arm64`, …). */
  readonly machine: string;
  /** Node's `process.platform` (`linux`, `win32`, …). */
  readonly os: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** File contents, or undefined when unreadable. */
  readFile(file: string): string | undefined;
  exists(file: string): boolean;
  /** A command's stdout, or undefined when it is missing, fails or times out. */
  execFile(file: string, args: readonly string[]): string | undefined;
  /** Path of onnxruntime-node's package.json, resolved without loading the module. */
  resolveOrtPackageJson(): string | undefined;
}

/** The probes of this process: /proc, /dev, nvidia-smi and module resolution. */
export function hostProbes(): PlatformProbes {
  return {
    machine: process.arch,
    os: process.platform,
    env: process.env,
    readFile: (file) => {
      try {
        return readFileSync(file, 'utf8');
      } catch {
        // Missing or unreadable: no fact from this file.
        return undefined;
      }
    },
    exists: existsSync,
    execFile: (file, args) => {
      try {
        return execFileSync(file, [...args], {
          encoding: 'utf8',
          timeout: 5_000,
          stdio: ['ignore', 'pipe', 'ignore'],
        });
      } catch {
        // A missing or failing tool is the fact "no answer" (probes return facts or nothing).
        return undefined;
      }
    },
    resolveOrtPackageJson: () => {
      try {
        return createRequire(import.meta.url).resolve('onnxruntime-node/package.json');
      } catch {
        // Not installed: then there is no provider library either.
        return undefined;
      }
    },
  };
}

/**
 * Where onnxruntime-node keeps its CUDA provider library on this host (whether or not it exists),
 * found from its package.json without loading the module; undefined when it is not installed.
 */
export function ortCudaProviderPath(probes: PlatformProbes): string | undefined {
  const explicit = probes.env[ORT_CUDA_PROVIDER_ENV];
  if (explicit !== undefined && explicit !== '') return explicit;
  const packageJson = probes.resolveOrtPackageJson();
  if (packageJson === undefined) return undefined;
  const napi = napiVersion(probes.readFile(packageJson));
  const file =
    probes.os === 'win32' ? 'onnxruntime_providers_cuda.dll' : 'libonnxruntime_providers_cuda.so';
  const dir = path.join(
    path.dirname(packageJson),
    'bin',
    `napi-v${napi}`,
    probes.os,
    probes.machine,
  );
  return path.join(dir, file);
}

function napiVersion(packageJson: string | undefined): number {
  try {
    const parsed = JSON.parse(packageJson ?? '{}') as { binary?: { napi_versions?: unknown } };
    const versions = parsed.binary?.napi_versions;
    const first: unknown = Array.isArray(versions) ? versions[0] : undefined;
    return typeof first === 'number' ? first : 6;
  } catch {
    // An unreadable package.json: assume the layout onnxruntime-node 1.x ships (napi-v6).
    return 6;
  }
}

/** The compute capability (`9.0`) of CUDA device 0, when a device node and nvidia-smi say so. */
function cudaComputeCapability(probes: PlatformProbes): string | undefined {
  if (!probes.exists('/dev/nvidia0') && !probes.exists('/proc/driver/nvidia/gpus'))
    return undefined;
  const out = probes.execFile('nvidia-smi', ['--query-gpu=compute_cap', '--format=csv,noheader']);
  const first = out?.split('\n')[0]?.trim() ?? '';
  return /^\d+\.\d+$/.test(first) ? first : undefined;
}

function parseOverride(value: string, cpuArch: string): PlatformFacts {
  const [device = '', arch = '', ...rest] = value.split(':');
  if (!isDevice(device) || arch === '' || rest.length > 0) {
    throw new FlowfleetError(
      'PLAT_INVALID_OVERRIDE',
      `${PLATFORM_OVERRIDE_ENV}='${value}' is not 'device:arch' with device cpu, cuda or webgpu`,
      { details: { value } },
    );
  }
  archChain(arch); // throws PLAT_UNKNOWN_ARCH for an arch no chain knows
  return { device, arch, features: [`override:${value}`], cpuArch };
}

/**
 * Platform facts from probe results (pure given the probes): cuda only when a CUDA device *and*
 * onnxruntime's CUDA provider library are present, else cpu with its x86-64 level or aarch64.
 * @throws FlowfleetError PLAT_INVALID_OVERRIDE, PLAT_UNKNOWN_ARCH for a bad test override
 */
export function platformFromProbes(probes: PlatformProbes): PlatformFacts {
  const cpu = classifyCpu(
    parseCpuinfoFlags(probes.readFile('/proc/cpuinfo') ?? ''),
    probes.machine,
  );
  const override = probes.env[PLATFORM_OVERRIDE_ENV];
  let facts: PlatformFacts;
  if (override !== undefined && override !== '') {
    facts = parseOverride(override, cpu.arch);
  } else {
    const capability = cudaComputeCapability(probes);
    const provider = capability === undefined ? undefined : ortCudaProviderPath(probes);
    if (capability !== undefined && provider !== undefined && probes.exists(provider)) {
      const arch = `sm${capability.replace('.', '')}`;
      facts = {
        device: 'cuda',
        arch,
        features: [`compute_cap:${capability}`, 'ort_cuda_provider'],
        cpuArch: cpu.arch,
      };
    } else {
      facts = { device: 'cpu', arch: cpu.arch, features: cpu.features, cpuArch: cpu.arch };
    }
  }
  return Object.freeze({ ...facts, features: Object.freeze([...facts.features]) });
}

let cached: PlatformFacts | undefined;

/**
 * This process's platform facts, probed once and cached (frozen). Passing probes computes fresh,
 * uncached facts from them (tests); missing probes default to the host's.
 * @throws FlowfleetError PLAT_INVALID_OVERRIDE, PLAT_UNKNOWN_ARCH for a bad test override
 */
export function detectPlatform(probes?: Partial<PlatformProbes>): PlatformFacts {
  if (probes !== undefined) return platformFromProbes({ ...hostProbes(), ...probes });
  cached ??= platformFromProbes(hostProbes());
  return cached;
}
