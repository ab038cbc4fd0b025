import { cfgCombine, flowMatchStep } from '@flowfleet/numerics';
import { createComponentRegistry, createKernelRegistry, registerKernel } from '@flowfleet/registry';
import { describe, expect, it } from 'vitest';
import { kernelConformanceChecks } from './suite/kernel-conformance.js';

/** Runs every check; returns the names of the failing ones. */
function failures(backend: string, registries: Parameters<typeof kernelConformanceChecks>[1]) {
  return kernelConformanceChecks(backend, registries).flatMap((check) => {
    try {
      check.run();
      return [];
    } catch {
      return [check.name];
    }
  });
}

function registries() {
  return { kernels: createKernelRegistry(), components: createComponentRegistry() };
}

// A kernel one float32 ulp off the reference: close, but not the reference.
const nudged: typeof flowMatchStep = (x, v, sigma, sigmaNext, out) => {
  const result = flowMatchStep(x, v, sigma, sigmaNext, out);
  const words = new Uint32Array(result.buffer, result.byteOffset, result.length);
  for (let i = 0; i < words.length; i++) words[i] = (words[i] ?? 0) + 1;
  return result;
};

describe('the conformance suite can fail', () => {
  it('fails a backend with no cells', () => {
    expect(failures('nobody', registries())).toEqual(['nobody declares at least one cell']);
  });

  it('holds cpu to bit-identity: a kernel one ulp off fails', () => {
    const regs = registries();
    registerKernel(
      {
        op: 'flow_match_step',
        device: 'cpu',
        arch: 'generic',
        fn: nudged,
        source: 'cpu',
        workspaceBytes: 0,
      },
      regs.kernels,
    );
    expect(failures('cpu', regs)).toEqual([
      '(flow_match_step, cpu, generic, default) matches @flowfleet/numerics bit for bit',
    ]);
  });

  it('holds other backends to the tolerance stated in their meta, and requires one', () => {
    const regs = registries();
    const base = { device: 'cuda', arch: 'sm80', fn: nudged, workspaceBytes: 16 } as const;
    registerKernel(
      { ...base, op: 'flow_match_step', source: 'loose', meta: { parityRtol: 1e-6 } },
      regs.kernels,
    );
    expect(failures('loose', regs)).toEqual([]);
    const strict = registries();
    registerKernel(
      { ...base, op: 'flow_match_step', source: 'strict', meta: { parityRtol: 1e-9 } },
      strict.kernels,
    );
    expect(failures('strict', strict)).toHaveLength(1);
    const silent = registries();
    registerKernel({ ...base, op: 'flow_match_step', source: 'silent' }, silent.kernels);
    expect(failures('silent', silent)).toHaveLength(1);
  });

  it('fails a cell whose arch no chain knows, and checks unavailable cells are never resolved', () => {
    const regs = registries();
    registerKernel(
      {
        op: 'cfg_combine',
        device: 'cpu',
        arch: 'pentium',
        fn: cfgCombine,
        source: 'odd',
        workspaceBytes: 0,
        meta: { parityRtol: 0 },
      },
      regs.kernels,
    );
    registerKernel(
      {
        op: 'cfg_combine',
        device: 'cuda',
        arch: 'sm90',
        fn: cfgCombine,
        source: 'odd',
        workspaceBytes: 0,
        available: () => false,
      },
      regs.kernels,
    );
    const checks = kernelConformanceChecks('odd', regs).map((check) => check.name);
    expect(checks).toContain(
      '(cfg_combine, cuda, sm90, default) is unavailable here and never resolved',
    );
    expect(failures('odd', regs)).toEqual([
      '(cfg_combine, cpu, pentium, default) is in the manifest with an honest workspace size',
      '(cfg_combine, cpu, pentium, default) resolves at its own rung',
      // Its parity is fine: cfgCombine is the reference.
    ]);
  });
});
