#!/usr/bin/env node
// npm run bench:agent [-- --benchmarks toolcalls,agentkv --runs N ...]
// Bundles the agent benchmarks (tools/bench-compare/agent-main.ts) with esbuild and runs it; it
// first rebuilds dist/ so `strata serve` is the current code.

import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
if (!argv.includes('--help')) {
  execFileSync(process.execPath, [join(root, 'scripts', 'bundle.mjs')], { stdio: 'inherit' });
}
// In dist/ like the other bundles: the stand-in model maker finds the addon relative to it.
const out = join(root, 'dist', 'bench-agent.mjs');
mkdirSync(dirname(out), { recursive: true });
await build({
  entryPoints: [join(root, 'tools', 'bench-compare', 'agent-main.ts')], outfile: out, bundle: true,
  platform: 'node', format: 'esm', target: 'node20', logLevel: 'warning', sourcemap: true,
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
});
const { main } = await import(pathToFileURL(out).href);
try {
  process.exitCode = await main(argv, root);
} catch (err) {
  process.stderr.write(`bench:agent: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
