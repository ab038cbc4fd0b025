import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// Soak runs (npm run soak:network): scenarios too long for CI's test run, on the same set-up, one
// file at a time. The test run's projects are left out: they would bring its `include` back.
const test = Object.fromEntries(
  Object.entries(base.test ?? {}).filter(([key]) => key !== 'projects'),
) as NonNullable<typeof base.test>;
export default defineConfig({
  ...base,
  test: { ...test, include: ['test/**/*.soak.ts'], testTimeout: 300_000, maxWorkers: 1 },
});
