import { defineConfig } from 'vitest/config';
import { SummaryReporter } from './tools/vitest/summary-reporter.js';

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
    include: ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts', 'test/**/*.test.ts'],
    reporters: ['default', new SummaryReporter()],
    // How test Redis servers start (container or redis-server child), probed once per run.
    globalSetup: ['tools/vitest/redis-starter-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
