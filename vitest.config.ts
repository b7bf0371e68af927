import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
    // Integration tests run real engines on a 2-core machine: one file at a time.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 300_000,
    globalSetup: ['test/helpers/global-setup.ts'],
  },
});
