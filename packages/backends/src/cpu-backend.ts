import { cfgCombine, flowMatchStep, flowSdeStep } from '@flowfleet/numerics';
import { SOLVER_OP } from '@flowfleet/platform';
import { DEFAULT_VARIANT, registerKernel, type KernelFn } from '@flowfleet/registry';
import { isDeclaredBy, resolveRegistries, type BackendRegistries } from './backend-registries.js';

/** The `source` of the TypeScript reference kernels. */
export const CPU_BACKEND_SOURCE = 'cpu';

/** The arch the reference kernels are declared at: portable TS runs on every CPU. */
export const CPU_BACKEND_ARCH = 'generic';

// Thin wrappers, so the registered callables belong to this backend while the numerics stay in
// one place. They allocate nothing beyond their outputs (and nothing at all given `out`).
const cpuFlowMatchStep: typeof flowMatchStep = (x, v, sigma, sigmaNext, out) =>
  flowMatchStep(x, v, sigma, sigmaNext, out);
const cpuCfgCombine: typeof cfgCombine = (uncond, cond, scale, out) =>
  cfgCombine(uncond, cond, scale, out);
const cpuFlowSdeStep: typeof flowSdeStep = (args) => flowSdeStep(args);

const CPU_KERNELS: readonly (readonly [string, KernelFn])[] = [
  [SOLVER_OP.euler, cpuFlowMatchStep as KernelFn],
  [SOLVER_OP.cfg, cpuCfgCombine as KernelFn],
  [SOLVER_OP.sde, cpuFlowSdeStep as KernelFn],
];

/**
 * Declares the TypeScript reference kernels (`flow_match_step`, `cfg_combine`, `flow_sde_step`)
 * at (op, cpu, generic, default): always available, the terminal rung and the parity oracle.
 * Idempotent: declaring them again is a no-op.
 * @throws FlowfleetError REG_DUPLICATE_CELL when another backend already holds one of the keys
 */
export function registerCpuBackend(registries?: BackendRegistries): void {
  const { kernels } = resolveRegistries(registries);
  for (const [op, fn] of CPU_KERNELS) {
    const key = [op, 'cpu', CPU_BACKEND_ARCH, DEFAULT_VARIANT];
    if (isDeclaredBy(kernels, key, CPU_BACKEND_SOURCE)) continue;
    registerKernel(
      {
        op,
        device: 'cpu',
        arch: CPU_BACKEND_ARCH,
        fn,
        source: CPU_BACKEND_SOURCE,
        workspaceBytes: 0,
        meta: { reference: '@flowfleet/numerics', parityRtol: 0, parityAtol: 0 },
      },
      kernels,
    );
  }
}
