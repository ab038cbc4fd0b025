import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// Soak runs (npm run soak:network): scenarios too long for CI's test run, on the same set-up.
export default defineConfig({
  ...base,
  test: { ...base.test, include: ['test/**/*.soak.ts'], testTimeout: 300_000 },
});
