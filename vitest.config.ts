import { defineConfig } from 'vitest/config';
import { SummaryReporter } from './tools/vitest/summary-reporter.js';

// Tests run on the TypeScript sources: every workspace package exports its `src/` under the
// `@flowfleet/source` condition, so no build step is needed before `vitest run`.
export default defineConfig({
  resolve: { conditions: ['@flowfleet/source', 'module', 'node', 'import', 'default'] },
  ssr: { resolve: { conditions: ['@flowfleet/source', 'node', 'import', 'default'] } },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts', 'test/**/*.test.ts'],
    reporters: ['default', new SummaryReporter()],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
