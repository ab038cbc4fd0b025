import { describe, expect, it } from 'vitest';
import {
  cachedProviderProbe,
  ortProviderPredicate,
  probeExecutionProvider,
  probeOrtProviders,
} from './probe-providers.js';

describe('provider probes', () => {
  it('reports cpu available and cuda/webgpu unavailable here, with the real reason', async () => {
    expect(cachedProviderProbe('cuda')).toBeUndefined();
    expect(() => ortProviderPredicate('cuda')()).toThrow(/not probed yet/);

    const probes = await probeOrtProviders();
    console.info(JSON.stringify(probes, null, 2));
    expect(probes.cpu.available).toBe(true);
    expect(probes.cpu.bundled).toBe(true);
    // This machine kind has no GPU: the npm package does not ship the CUDA provider library, and
    // the bundled WebGPU provider finds no adapter.
    expect(probes.cuda.available).toBe(false);
    expect(probes.cuda.bundled).toBe(false);
    expect(probes.cuda.reason).toMatch(/Failed to load shared library/);
    expect(probes.webgpu.available).toBe(false);
    expect(probes.webgpu.reason.length).toBeGreaterThan(0);
    expect(probes.webgpu.reason).toMatch(/adapter/i);

    // Cached: the predicates read the cache and carry the reason; probing again does not re-run.
    expect(cachedProviderProbe('cuda')).toEqual(probes.cuda);
    expect(ortProviderPredicate('cpu')()).toBe(true);
    expect(() => ortProviderPredicate('cuda')()).toThrow(probes.cuda.reason);
    expect(await probeExecutionProvider('webgpu')).toBe(probes.webgpu);
  });
});
