// The linux-arm64 suite (npm run test:arm64): engine, server and integration tests whose native
// paths differ per CPU architecture, run by the linux-arm64 Node under qemu-user on the
// cross-built engine (scripts/test-emulated.mjs sets STRATA_EMULATED_NODE and STRATA_ADDON).
// Chosen so each native path runs at least once (load, generate, batched == solo with
// deterministic, park, sessions, grammar, embeddings, images through a projector, the engine
// process) within minutes under emulation, which is 10 to 30 times slower than the host.
import { defineConfig } from 'vitest/config';
import { emulatedForks } from './test/emulated/emulated-pool.js';

const node = process.env.STRATA_EMULATED_NODE;
if (!node) throw new Error('STRATA_EMULATED_NODE is not set: run this suite with npm run test:arm64');

export default defineConfig({
  test: {
    include: [
      'test/emulated/arm64-platform.test.ts',
      'test/integration/engine-process.test.ts',
      'test/emulated/arm64-exactness.test.ts',
      'test/integration/engine-session.test.ts',
      'test/integration/engine-grammar.test.ts',
      'test/integration/server-embeddings.test.ts',
      'test/integration/engine-images.test.ts',
    ],
    pool: emulatedForks(node),
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 600_000,
    globalSetup: ['test/helpers/global-setup.ts'],
    reporters: ['verbose'],
  },
});
