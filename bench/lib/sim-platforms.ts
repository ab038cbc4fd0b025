// The platforms of bench:scale's simulated fleet: a realistic mix of CPU hosts (x86-64 levels,
// aarch64), CUDA GPUs (sm80 A100, sm86 A10/RTX 3090, sm89 L4/RTX 4090, sm90 H100) and WebGPU
// browsers, each turned into the manifest rows a worker on it would advertise. The rows come from
// the real registries: the TS reference kernels (`registerCpuBackend`) and the ONNX Runtime
// component cells (`declareOrtCells`, its availability predicates answered by the simulated host's
// facts instead of this machine's). flowfleet ships no CUDA kernels yet, so the per-arch CUDA
// kernel cells a GPU worker declares (sm80 baseline, fp8 variants from sm89, wgmma from sm90)
// are declared here with the bench's own source `bench-sim` and a stub that refuses to run: they
// only shape the manifests and the capability matrix, as a GPU backend's registrations would.
import { declareOrtCells, registerCpuBackend, type OrtCellProvider } from '@flowfleet/backends';
import { FlowfleetError } from '@flowfleet/errors';
import { DEFAULT_CARD_REGISTRY } from '@flowfleet/models';
import { SOLVER_OPS, type PlatformFacts } from '@flowfleet/platform';
import {
  createComponentRegistry,
  createKernelRegistry,
  registerKernel,
  type KernelFn,
} from '@flowfleet/registry';
import type { ManifestInput } from '@flowfleet/worker';

/** One kind of host in the mix. */
export interface SimProfile {
  readonly name: string;
  /** Relative share of the fleet. */
  readonly share: number;
  readonly facts: PlatformFacts;
  /** CUDA kernel cells (op, variant) this GPU declares at its own arch. */
  readonly cudaKernels: readonly (readonly [string, string])[];
  /** Process-wide concurrency such a worker runs with. */
  readonly concurrency: number;
}

const V2 = ['sse4_1', 'sse4_2', 'ssse3', 'popcnt', 'cx16'];
const V3 = [...V2, 'avx', 'avx2', 'bmi1', 'bmi2', 'f16c', 'fma', 'lzcnt', 'movbe', 'xsave'];
const V4 = [...V3, 'avx512f', 'avx512bw', 'avx512cd', 'avx512dq', 'avx512vl'];

function cpu(arch: string, features: readonly string[]): PlatformFacts {
  return { device: 'cpu', arch, features, cpuArch: arch };
}

function cuda(arch: string, capability: string, cpuArch: string): PlatformFacts {
  return {
    device: 'cuda',
    arch,
    features: [`compute_cap:${capability}`, 'ort_cuda_provider'],
    cpuArch,
  };
}

const SOLVER_DEFAULT = SOLVER_OPS.map((op) => [op, 'default'] as const);
const FP8 = [
  ['flow_sde_step', 'fp8'],
  ['cfg_combine', 'fp8'],
] as const;

/** The mix: shares sum to 100. */
export const SIM_PROFILES: readonly SimProfile[] = Object.freeze([
  { name: 'cpu-v4', share: 14, facts: cpu('x86-64-v4', V4), cudaKernels: [], concurrency: 2 },
  { name: 'cpu-v3', share: 22, facts: cpu('x86-64-v3', V3), cudaKernels: [], concurrency: 2 },
  { name: 'cpu-v2', share: 4, facts: cpu('x86-64-v2', V2), cudaKernels: [], concurrency: 1 },
  {
    name: 'cpu-aarch64',
    share: 6,
    facts: cpu('aarch64', ['asimd', 'fphp', 'asimdhp', 'sve']),
    cudaKernels: [],
    concurrency: 2,
  },
  {
    name: 'cuda-sm80',
    share: 16,
    facts: cuda('sm80', '8.0', 'x86-64-v3'),
    cudaKernels: SOLVER_DEFAULT,
    concurrency: 4,
  },
  {
    name: 'cuda-sm86',
    share: 10,
    facts: cuda('sm86', '8.6', 'x86-64-v3'),
    cudaKernels: SOLVER_DEFAULT,
    concurrency: 2,
  },
  {
    name: 'cuda-sm89',
    share: 12,
    facts: cuda('sm89', '8.9', 'x86-64-v4'),
    cudaKernels: [...SOLVER_DEFAULT, ...FP8],
    concurrency: 2,
  },
  {
    name: 'cuda-sm90',
    share: 12,
    facts: cuda('sm90', '9.0', 'x86-64-v4'),
    cudaKernels: [...SOLVER_DEFAULT, ...FP8, ['flow_sde_step', 'wgmma']],
    concurrency: 8,
  },
  {
    name: 'webgpu',
    share: 4,
    facts: {
      device: 'webgpu',
      arch: 'generic',
      features: ['adapter:bench-sim'],
      cpuArch: 'x86-64-v3',
    },
    cudaKernels: [],
    concurrency: 1,
  },
]);

const refuse = (): never => {
  throw new FlowfleetError('WORKER_INVALID_OPTION', 'a simulated bench cell was called');
};

/** The manifest input of every worker of `profile` except its identity and start time. */
export type SimManifestBase = Omit<
  ManifestInput,
  'workerId' | 'host' | 'pid' | 'startedAt' | 'weights'
>;

/** Builds the registries a worker on `profile` would have and reads their manifest rows. */
export function simManifestBase(profile: SimProfile): SimManifestBase {
  const kernels = createKernelRegistry();
  const components = createComponentRegistry();
  registerCpuBackend({ kernels });
  for (const [op, variant] of profile.cudaKernels) {
    registerKernel(
      {
        op,
        device: 'cuda',
        arch: profile.facts.arch,
        variant,
        fn: refuse as KernelFn,
        source: 'bench-sim',
        workspaceBytes: variant === 'default' ? 0 : 1 << 20,
        meta: { simulated: true },
      },
      kernels,
    );
  }
  const device = profile.facts.device;
  const kinds = [
    ...new Set(DEFAULT_CARD_REGISTRY.cards.flatMap((card) => card.components.map((c) => c.kind))),
  ];
  declareOrtCells(
    {
      registries: { components },
      kinds,
      builderFor: () => async () => refuse(),
      // What OrtSessions.probeAll() would have cached on that host.
      cachedProbe: (provider: OrtCellProvider) =>
        provider === 'cpu' || provider === device
          ? { available: true }
          : { available: false, reason: `no ${provider} adapter on this host (simulated)` },
    },
    {
      bindingPath: () => '/sim/onnxruntime_binding.node',
      exists: () => true,
      platform: () => profile.facts,
    },
  );
  return {
    facts: profile.facts,
    kernels: kernels.manifest(),
    components: components.manifest(),
    models: DEFAULT_CARD_REGISTRY.ids,
    concurrency: profile.concurrency,
  };
}

/** The profile of the `index`-th simulated worker: deterministic, in the mix's proportions. */
export function profileAt(index: number): SimProfile {
  const total = SIM_PROFILES.reduce((sum, p) => sum + p.share, 0);
  // A multiplicative hash spreads neighbouring indices over the mix.
  let slot = (Math.imul(index + 1, 2654435761) >>> 0) % total;
  for (const profile of SIM_PROFILES) {
    if (slot < profile.share) return profile;
    slot -= profile.share;
  }
  return SIM_PROFILES[0]!;
}

/** The weight versions a simulated worker holds per component (most on the newest). */
export function simWeights(index: number): Record<string, number> {
  const lag = index % 10 === 0 ? 1 : 0;
  const weights: Record<string, number> = {};
  for (const card of DEFAULT_CARD_REGISTRY.cards) {
    for (const component of card.components) weights[component.id] = Math.max(0, 12 - lag);
  }
  return weights;
}
