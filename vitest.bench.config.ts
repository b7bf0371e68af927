import { defineConfig } from 'vitest/config';

// `npm run bench:check`: the bench's scenarios against a real llama-server (built from the pinned
// source on first use, ~20 minutes on 2 cores). Kept out of `npm test`, which tests the product.
export default defineConfig({
  test: {
    include: ['test/bench/**/*.test.ts'],
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 3_600_000,
    globalSetup: ['test/helpers/global-setup.ts'],
  },
});
