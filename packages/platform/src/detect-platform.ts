import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { FlowfleetError } from '@flowfleet/errors';
import { classifyCpu, parseCpuinfoFlags } from './cpu-arch.js';
import { archChain } from './fallback-chains.js';
import { DEVICES, isDevice, type Device, type PlatformFacts } from './platform-types.js';
import {
  requestWebGpuAdapter,
  SOFTWARE_ADAPTER_ARCH,
  webgpuArch,
  webgpuFeatures,
  type WebGpuAdapterProbe,
} from './webgpu-adapter.js';

/**
 * Test-only: `FLOWFLEET_PLATFORM_OVERRIDE=device:arch` (e.g. `cuda:sm90`) makes detection report
 * that platform instead of the real one, so a test fleet can advertise lanes it cannot serve.
 * The facts then carry `override:<value>` in `features`. Never set it in production.
 */
export const PLATFORM_OVERRIDE_ENV = 'FLOWFLEET_PLATFORM_OVERRIDE';

/** Path of an onnxruntime CUDA provider library, when it is not next to the binding. */
export const ORT_CUDA_PROVIDER_ENV = 'FLOWFLEET_ORT_CUDA_PROVIDER';

/**
 * Which device this process serves (one device per worker process): `auto` (the default: cuda
 * when present, else a hardware WebGPU adapter when a GPU device node exists, else cpu), or
 * `cpu`, `cuda`, `webgpu` to insist on one (detection fails when it is not here). A machine with
 * a CPU and a GPU runs one worker per device, e.g. `FLOWFLEET_DEVICE=cpu` and
 * `FLOWFLEET_DEVICE=webgpu`.
 */
export const DEVICE_ENV = 'FLOWFLEET_DEVICE';

/** What `FLOWFLEET_DEVICE` may say. */
export type DeviceChoice = 'auto' | Device;

/** Every device choice. */
export const DEVICE_CHOICES: readonly DeviceChoice[] = Object.freeze(['auto', ...DEVICES]);

// A GPU that Vulkan (and so Dawn) could drive has a device node: NVIDIA's, or a DRM render node.
// Software adapters need none, which is why `auto` asks for an adapter only when one exists.
const GPU_DEVICE_NODES = ['/dev/nvidia0', '/dev/dri/renderD128'];

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
  /** What a WebGPU adapter request answers (Dawn in a child process with `env`). */
  webgpuAdapter(env: Readonly<Record<string, string | undefined>>): WebGpuAdapterProbe;
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
    webgpuAdapter: (env) => requestWebGpuAdapter(env),
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
  archChain(arch, device); // throws PLAT_UNKNOWN_ARCH for an arch no chain knows
  return { device, arch, features: [`override:${value}`], cpuArch };
}

function deviceChoice(probes: PlatformProbes): DeviceChoice {
  const value = probes.env[DEVICE_ENV];
  if (value === undefined || value === '') return 'auto';
  if ((DEVICE_CHOICES as readonly string[]).includes(value)) return value as DeviceChoice;
  throw new FlowfleetError(
    'PLAT_INVALID_DEVICE',
    `${DEVICE_ENV}='${value}' is not one of ${DEVICE_CHOICES.join(', ')}`,
    { details: { value, choices: [...DEVICE_CHOICES] } },
  );
}

function unavailable(device: Device, reason: string): never {
  throw new FlowfleetError(
    'PLAT_DEVICE_UNAVAILABLE',
    `${DEVICE_ENV}=${device}, but there is no usable ${device} device here: ${reason}`,
    { details: { device, reason } },
  );
}

/** CUDA facts when a CUDA device *and* onnxruntime's CUDA provider library are present. */
function cudaFacts(probes: PlatformProbes, cpuArch: string): PlatformFacts | string {
  const capability = cudaComputeCapability(probes);
  if (capability === undefined)
    return 'no CUDA device (no /dev/nvidia0, or nvidia-smi did not answer)';
  const provider = ortCudaProviderPath(probes);
  if (provider === undefined || !probes.exists(provider)) {
    return `onnxruntime's CUDA provider library is missing (${provider ?? 'onnxruntime-node is not installed'})`;
  }
  return {
    device: 'cuda',
    arch: `sm${capability.replace('.', '')}`,
    features: [`compute_cap:${capability}`, 'ort_cuda_provider'],
    cpuArch,
  };
}

/** WebGPU facts from the adapter the probe gets, arch derived from what it says. */
function webgpuFacts(probe: WebGpuAdapterProbe, cpuArch: string): PlatformFacts | string {
  if (probe.adapter === undefined) return probe.reason;
  return {
    device: 'webgpu',
    arch: webgpuArch(probe.adapter),
    features: webgpuFeatures(probe.adapter),
    cpuArch,
  };
}

/**
 * Platform facts from probe results (pure given the probes), for the device `FLOWFLEET_DEVICE`
 * chooses: cuda only when a CUDA device *and* onnxruntime's CUDA provider library are present;
 * webgpu when a WebGPU adapter answers, its arch derived from what the adapter says (`software`
 * for an emulated one); cpu with its x86-64 level or aarch64. `auto` takes cuda, else a hardware
 * WebGPU adapter (asked for only when a GPU device node exists), else cpu — never a software
 * adapter, which serves only when asked for by name.
 * @throws FlowfleetError PLAT_INVALID_DEVICE for a bad FLOWFLEET_DEVICE, PLAT_DEVICE_UNAVAILABLE
 *   when the named device is not here, PLAT_INVALID_OVERRIDE, PLAT_UNKNOWN_ARCH for a bad test
 *   override
 */
export function platformFromProbes(probes: PlatformProbes): PlatformFacts {
  const cpu = classifyCpu(
    parseCpuinfoFlags(probes.readFile('/proc/cpuinfo') ?? ''),
    probes.machine,
  );
  const cpuFacts: PlatformFacts = {
    device: 'cpu',
    arch: cpu.arch,
    features: cpu.features,
    cpuArch: cpu.arch,
  };
  const override = probes.env[PLATFORM_OVERRIDE_ENV];
  let facts: PlatformFacts;
  if (override !== undefined && override !== '') {
    facts = parseOverride(override, cpu.arch);
  } else {
    const choice = deviceChoice(probes);
    if (choice === 'cpu') {
      facts = cpuFacts;
    } else if (choice === 'cuda') {
      const cuda = cudaFacts(probes, cpu.arch);
      facts = typeof cuda === 'string' ? unavailable('cuda', cuda) : cuda;
    } else if (choice === 'webgpu') {
      const webgpu = webgpuFacts(probes.webgpuAdapter(probes.env), cpu.arch);
      facts = typeof webgpu === 'string' ? unavailable('webgpu', webgpu) : webgpu;
    } else {
      const cuda = cudaFacts(probes, cpu.arch);
      const webgpu =
        typeof cuda === 'string' && GPU_DEVICE_NODES.some((node) => probes.exists(node))
          ? webgpuFacts(probes.webgpuAdapter(probes.env), cpu.arch)
          : undefined;
      if (typeof cuda !== 'string') facts = cuda;
      else if (typeof webgpu === 'object' && webgpu.arch !== SOFTWARE_ADAPTER_ARCH) facts = webgpu;
      else facts = cpuFacts;
    }
  }
  return Object.freeze({ ...facts, features: Object.freeze([...facts.features]) });
}

let cached: PlatformFacts | undefined;

/**
 * This process's platform facts, probed once and cached (frozen). Passing probes computes fresh,
 * uncached facts from them (tests, or a worker told its device in code: `{env: {...process.env,
 * FLOWFLEET_DEVICE: 'webgpu'}}`); missing probes default to the host's.
 * @throws FlowfleetError as `platformFromProbes`
 */
export function detectPlatform(probes?: Partial<PlatformProbes>): PlatformFacts {
  if (probes !== undefined) return platformFromProbes({ ...hostProbes(), ...probes });
  cached ??= platformFromProbes(hostProbes());
  return cached;
}
