import assert from 'node:assert/strict';
import { isFlowfleetError } from '@flowfleet/errors';
import {
  archChain,
  bitIdentical,
  createPlatform,
  isDevice,
  SOLVER_OPS,
  within,
  type ParityTolerance,
} from '@flowfleet/platform';
import type { Cell, KernelFn } from '@flowfleet/registry';
import { resolveRegistries, type BackendRegistries } from '@flowfleet/backends';
import { solverCases } from './solver-cases.js';

/** One named conformance check; `run` throws an AssertionError when the backend falls short. */
export interface ConformanceCheck {
  readonly name: string;
  run(): void;
}

/** Options of the conformance suite. */
export interface KernelConformanceOptions {
  /** Require every cell of the backend to be available here (the cpu backend must be). */
  readonly requireAvailable?: boolean;
}

/** The backend held to bit-identity with the reference: it *is* the reference. */
const ORACLE_BACKEND = 'cpu';

function label(key: readonly string[]): string {
  return `(${key.join(', ')})`;
}

/** The tolerance a backend states next to its registration (meta `parityRtol`/`parityAtol`). */
function statedTolerance(cell: Cell<KernelFn>): ParityTolerance {
  const { parityRtol, parityAtol } = cell.meta;
  assert.ok(
    typeof parityRtol === 'number' && parityRtol >= 0,
    `${label(cell.key)} states no parityRtol in its meta: a non-reference kernel must declare its tolerance`,
  );
  return { rtol: parityRtol, atol: typeof parityAtol === 'number' ? parityAtol : 0 };
}

function checkParity(backend: string, cell: Cell<KernelFn>): void {
  const op = cell.key[0] ?? '';
  const tolerance = backend === ORACLE_BACKEND ? undefined : statedTolerance(cell);
  const cases = solverCases(op);
  assert.ok(cases.length > 0, `no generated cases for op '${op}'`);
  for (const solverCase of cases) {
    for (const { label: what, actual, expected } of solverCase.compare(cell.fn)) {
      const where = `${label(cell.key)} ${solverCase.name}, ${what}`;
      assert.equal(actual.length, expected.length, `${where}: length`);
      if (tolerance === undefined) {
        const same =
          actual.BYTES_PER_ELEMENT === expected.BYTES_PER_ELEMENT && bitIdentical(actual, expected);
        assert.ok(same, `${where}: not bit-identical to @flowfleet/numerics`);
      } else {
        const verdict = within(actual, expected, tolerance);
        assert.ok(
          verdict.passed,
          `${where}: max-abs ${verdict.maxAbs}, max-rel ${verdict.maxRel} at ${verdict.index} exceed ${JSON.stringify(tolerance)}`,
        );
      }
    }
  }
}

function platformAt(cell: Cell<KernelFn>, registries: BackendRegistries) {
  const [, device = '', arch = ''] = cell.key;
  assert.ok(isDevice(device), `${label(cell.key)}: '${device}' is not a device`);
  return createPlatform({
    facts: { device, arch, features: [], cpuArch: device === 'cpu' ? arch : 'generic' },
    ...resolveRegistries(registries),
  });
}

/**
 * The shared conformance checks for one backend's kernels (cells whose `source` is
 * `backendName`): each is in the manifest with a non-negative integer `workspaceBytes` and a key
 * the platform understands; each available solver kernel matches @flowfleet/numerics on generated
 * inputs (bit-identical for `cpu`, within the registration's `parityRtol`/`parityAtol`
 * otherwise) and resolves at its own rung; an unavailable one is never resolved.
 */
export function kernelConformanceChecks(
  backendName: string,
  registries: BackendRegistries = {},
  options: KernelConformanceOptions = {},
): ConformanceCheck[] {
  const { kernels, components } = resolveRegistries(registries);
  const cells = kernels.cells().filter((cell) => cell.source === backendName);
  const checks: ConformanceCheck[] = [
    {
      name: `${backendName} declares at least one cell`,
      run: () => {
        const ownComponents = components.cells().filter((cell) => cell.source === backendName);
        assert.ok(cells.length + ownComponents.length > 0, `no cell has source '${backendName}'`);
      },
    },
  ];
  for (const cell of cells) {
    const [op = '', , arch = '', variant = ''] = cell.key;
    checks.push({
      name: `${label(cell.key)} is in the manifest with an honest workspace size`,
      run: () => {
        const row = kernels
          .manifest()
          .find((r) => cell.key.every((field, i) => r.key[kernels.keyFields[i] ?? ''] === field));
        assert.ok(row !== undefined, `${label(cell.key)} has no manifest row`);
        assert.equal(row.source, backendName);
        const bytes = row.meta['workspaceBytes'];
        assert.ok(
          typeof bytes === 'number' && Number.isInteger(bytes) && bytes >= 0,
          `${label(cell.key)}: workspaceBytes ${String(bytes)} is not a non-negative integer`,
        );
        assert.doesNotThrow(() => archChain(arch), `${label(cell.key)}: unknown arch '${arch}'`);
        if (options.requireAvailable === true) {
          assert.ok(row.available, `${label(cell.key)} is unavailable: ${row.reason ?? ''}`);
        }
      },
    });
    const available = kernels.probe(cell).available;
    if (available) {
      checks.push({
        name: `${label(cell.key)} resolves at its own rung`,
        run: () => {
          const resolution = platformAt(cell, registries).kernels.resolution(op, variant);
          assert.deepEqual([...resolution.key], [...cell.key]);
          assert.equal(resolution.source, backendName);
        },
      });
      if ((SOLVER_OPS as readonly string[]).includes(op)) {
        checks.push({
          name: `${label(cell.key)} matches @flowfleet/numerics${backendName === ORACLE_BACKEND ? ' bit for bit' : ' within its stated tolerance'}`,
          run: () => checkParity(backendName, cell),
        });
      }
    } else {
      checks.push({
        name: `${label(cell.key)} is unavailable here and never resolved`,
        run: () => {
          assert.equal(kernels.resolveFirst([cell.key]).cell, undefined);
          try {
            const resolution = platformAt(cell, registries).kernels.resolution(op, variant);
            assert.notDeepEqual([...resolution.key], [...cell.key]);
          } catch (error) {
            if (!isFlowfleetError(error, 'PLAT_NO_KERNEL')) throw error;
          }
        },
      });
    }
  }
  return checks;
}
