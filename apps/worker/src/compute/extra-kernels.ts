import { FlowfleetError } from '@flowfleet/errors';
import {
  DEFAULT_VARIANT,
  registerKernel,
  type KernelFn,
  type TupleRegistry,
} from '@flowfleet/registry';

/** A test-only kernel cell: op (and variant) declared on the worker's device at arch `generic`. */
export interface ExtraKernel {
  readonly op: string;
  readonly variant: string;
}

/** The `source` of extra kernel cells in the manifest. */
export const EXTRA_KERNEL_SOURCE = 'test-extra';

const OP = /^[a-z][a-z0-9_.-]{0,127}$/;
const VARIANT = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

/**
 * Parses `FLOWFLEET_EXTRA_KERNELS`: comma-separated `op` or `op:variant` entries (variant
 * defaults to `default`). A new op with the default variant gives the worker a capability its
 * peers lack, so tests can route a lane to one worker only.
 * @throws FlowfleetError WORKER_INVALID_OPTION naming the bad entry
 */
export function parseExtraKernels(text: string): ExtraKernel[] {
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      const [op = '', variant = DEFAULT_VARIANT, ...rest] = entry.split(':');
      if (!OP.test(op) || !VARIANT.test(variant) || rest.length > 0) {
        throw new FlowfleetError(
          'WORKER_INVALID_OPTION',
          `extra kernel '${entry}' is not 'op' or 'op:variant' (lowercase ids)`,
          { details: { option: 'extraKernels', entry } },
        );
      }
      return { op, variant };
    });
}

/** A stub the runtime never calls: the cell only advertises a capability. */
const extraKernelStub: KernelFn = () => {
  throw new FlowfleetError('WORKER_INVALID_OPTION', 'a test-only extra kernel was called');
};

/**
 * Declares each extra kernel at (op, device, generic, variant) in `kernels`.
 * @throws FlowfleetError REG_DUPLICATE_CELL when a cell already holds that key
 */
export function registerExtraKernels(
  kernels: TupleRegistry<KernelFn>,
  device: string,
  extra: readonly ExtraKernel[],
): void {
  for (const { op, variant } of extra) {
    registerKernel(
      {
        op,
        device,
        arch: 'generic',
        variant,
        fn: extraKernelStub,
        source: EXTRA_KERNEL_SOURCE,
        workspaceBytes: 0,
        meta: { testOnly: true },
      },
      kernels,
    );
  }
}
