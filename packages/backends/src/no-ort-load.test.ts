import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

// Runs in a fresh Node process (the test runner's own module graph would hide the evidence):
// declare every cell, build both matrices, then report every sign of onnxruntime in the process:
// CommonJS modules in require.cache (onnxruntime-node is CommonJS) and native libraries mapped
// (process.report's sharedObjects). With LOAD_ORT=1 it loads onnxruntime-node first: the control.
const SCRIPT = `
import { createRequire } from 'node:module';
import { declareOrtCells, registerCpuBackend } from '@flowfleet/backends';
import { createPlatform } from '@flowfleet/platform';
registerCpuBackend();
declareOrtCells({
  kinds: ['dit', 'text_encoder'],
  builderFor: () => () => Promise.reject(new Error('never built here')),
});
if (process.env.LOAD_ORT === '1') await import('onnxruntime-node');
const platform = createPlatform();
const kernels = platform.kernelMatrix();
const components = platform.componentMatrix();
const modules = Object.keys(createRequire(import.meta.url).cache).filter((m) => m.includes('onnxruntime'));
const libraries = process.report.getReport().sharedObjects.filter((s) => s.includes('onnxruntime'));
console.log(JSON.stringify({ modules, libraries, kernelCells: kernels.cells.length, componentCells: components.cells.length }));
`;

async function runChild(loadOrt: boolean) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--conditions=@flowfleet/source', '--import', 'tsx', '--input-type=module', '-e', SCRIPT],
    { cwd: ROOT, env: { ...process.env, LOAD_ORT: loadOrt ? '1' : '0' }, timeout: 60_000 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as {
    modules: string[];
    libraries: string[];
    kernelCells: number;
    componentCells: number;
  };
}

describe('capability matrices and onnxruntime-node', () => {
  it('building both matrices leaves onnxruntime-node unloaded (and the check can see a load)', async () => {
    const [clean, control] = await Promise.all([runChild(false), runChild(true)]);
    expect(clean).toEqual({ modules: [], libraries: [], kernelCells: 3, componentCells: 6 });
    expect(control.modules.some((m) => m.includes('onnxruntime-node'))).toBe(true);
    expect(control.libraries.some((s) => s.endsWith('onnxruntime_binding.node'))).toBe(true);
    expect(control.kernelCells).toBe(3);
  });
});
