import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { SummaryReporter } from './tools/vitest/summary-reporter.js';

const include = ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts', 'test/**/*.test.ts'];

/**
 * The files that keep the CPU busy for most of their run (ORT and WebGPU forwards, parity,
 * ONNX export) or measure time on it (event-loop lag against a forward's duration, a noise
 * generator against a baseline): the `compute` project runs them one at a time, after the rest,
 * so none shares the cores with another test file.
 */
const compute = [
  'test/webgpu/**/*.test.ts',
  'test/ort/**/*.test.ts',
  'test/parity/**/*.test.ts',
  'test/onnx/**/*.test.ts',
  'test/conformance/**/*.test.ts',
  'test/runtime/**/*.test.ts',
  'packages/backends/src/ort/**/*.test.ts',
  'packages/numerics/src/gaussian-noise.test.ts',
];

/**
 * Everything else mostly waits (on Redis, HTTP, child processes, sockets, the network harness):
 * the `io` project runs files side by side, at least two at once even on two cores. These tests
 * must hold on a busy machine: they wait for the state they assert (poll with a deadline), never
 * for time.
 */
const ioWorkers = Math.max(2, availableParallelism());

// Tests run on the TypeScript sources: every workspace package exports its `src/` under the
// `@flowfleet/source` condition, so no build step is needed before `vitest run`.
export default defineConfig({
  resolve: { conditions: ['@flowfleet/source', 'module', 'node', 'import', 'default'] },
  ssr: { resolve: { conditions: ['@flowfleet/source', 'node', 'import', 'default'] } },
  // The global set-up runs in vitest's own environment: it resolves the sources the same way.
  environments: {
    __vitest__: { resolve: { conditions: ['@flowfleet/source', 'node', 'import', 'default'] } },
  },
  test: {
    // The plain count line, then the slowest files (where the run's time goes).
    reporters: ['default', new SummaryReporter({ slowest: 15 })],
    // How test Redis servers start (container or redis-server child), probed once per run.
    globalSetup: ['tools/vitest/redis-starter-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two groups, one after the other: `io` (group 0, files side by side), then `compute`
    // (group 1, one file at a time).
    projects: [
      {
        extends: true,
        test: {
          name: 'io',
          include,
          exclude: [...configDefaults.exclude, ...compute],
          maxWorkers: ioWorkers,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'compute',
          include: compute,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
