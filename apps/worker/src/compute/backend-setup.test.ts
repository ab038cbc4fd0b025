import { isFlowfleetError } from '@flowfleet/errors';
import { ComputePool } from '@flowfleet/platform';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setUpBackends, type BackendSetupOptions } from './backend-setup.js';

let pool: ComputePool;
beforeAll(async () => {
  pool = await ComputePool.create({ threads: 1 });
});
afterAll(async () => {
  await pool.close();
});

const options = (overrides: Partial<BackendSetupOptions>): BackendSetupOptions => ({
  backend: 'auto',
  extraKernels: [],
  pool,
  componentKinds: ['dit'],
  ortIntraOpThreads: 1,
  logger: pino({ level: 'silent' }),
  ...overrides,
});

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isFlowfleetError(error)) return error.code;
    throw error;
  }
  return 'resolved';
}

describe('setUpBackends on a webgpu worker', () => {
  const webgpu = {
    device: 'webgpu',
    arch: 'software',
    features: [],
    cpuArch: 'generic',
  } as const;

  it('refuses a backend that would compute on the CPU', async () => {
    for (const backend of ['cpu', 'ort-cpu'] as const) {
      expect(await codeOf(setUpBackends(options({ backend, facts: webgpu })))).toBe(
        'WORKER_BACKEND_UNAVAILABLE',
      );
    }
  });

  it('does not start as webgpu where no adapter answers, saying why', async () => {
    const saved = { ...process.env };
    process.env['VK_DRIVER_FILES'] = '/nonexistent.json';
    process.env['VK_ICD_FILENAMES'] = '/nonexistent.json';
    try {
      const failure = setUpBackends(options({ device: 'webgpu' }));
      await expect(failure).rejects.toMatchObject({ code: 'PLAT_DEVICE_UNAVAILABLE' });
      await expect(failure).rejects.toThrow(/no WebGPU adapter/);
    } finally {
      process.env = saved;
    }
  }, 30_000);
});
