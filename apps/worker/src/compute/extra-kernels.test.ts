import { isFlowfleetError } from '@flowfleet/errors';
import { createKernelRegistry } from '@flowfleet/registry';
import { describe, expect, it } from 'vitest';
import { EXTRA_KERNEL_SOURCE, parseExtraKernels, registerExtraKernels } from './extra-kernels.js';

describe('extra kernels (test-only)', () => {
  it('parses op and op:variant entries', () => {
    expect(parseExtraKernels(' a_op ,b.op:v2,, ')).toEqual([
      { op: 'a_op', variant: 'default' },
      { op: 'b.op', variant: 'v2' },
    ]);
  });

  it('rejects malformed entries with a coded error', () => {
    for (const bad of ['Op', 'a:b:c', ':v', 'a:']) {
      let error: unknown;
      try {
        parseExtraKernels(bad);
      } catch (caught) {
        error = caught;
      }
      expect(isFlowfleetError(error, 'WORKER_INVALID_OPTION'), bad).toBe(true);
    }
  });

  it('declares each at (op, device, generic, variant) as an available manifest row', () => {
    const kernels = createKernelRegistry();
    registerExtraKernels(kernels, 'cpu', [{ op: 'x_probe', variant: 'default' }]);
    expect(kernels.manifest()).toEqual([
      expect.objectContaining({
        key: { op: 'x_probe', device: 'cpu', arch: 'generic', variant: 'default' },
        available: true,
        source: EXTRA_KERNEL_SOURCE,
      }),
    ]);
  });
});
