#!/usr/bin/env node
// node tools/run-bench-script.mjs NAME [options]: bundles the benchmark NAME with esbuild (after
// dist/, so `strata serve` is the current code) and runs its main(argv, root). Used by the
// bench:* commands whose benchmark drives extension or server code (the agent loop, the client,
// the codebase index) against real servers. --help lists a benchmark's options.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Each benchmark's entry under tools/. */
const BENCHMARKS = {
  agent: 'bench-compare/agent-main.ts',
  agents: 'bench-compare/agents-main.ts',
  'agent-long': 'bench-agent-long.ts',
  codebase: 'bench-codebase.ts',
  responses: 'bench-responses.ts',
};

const [name, ...argv] = process.argv.slice(2);
if (!Object.hasOwn(BENCHMARKS, name ?? '')) {
  process.stderr.write(`usage: node tools/run-bench-script.mjs ${Object.keys(BENCHMARKS).join('|')} [options] (got '${name ?? ''}')\n`);
  process.exit(2);
}
if (!argv.includes('--help')) execFileSync(process.execPath, [join(root, 'scripts', 'bundle.mjs')], { stdio: 'inherit' });
// In dist/ like the other bundles: the stand-in model maker finds the addon, and the codebase
// store its node-sqlite3-wasm.wasm, relative to it.
const out = join(root, 'dist', `bench-${name}.mjs`);
await build({
  entryPoints: [join(root, 'tools', BENCHMARKS[name])], outfile: out, bundle: true,
  platform: 'node', format: 'esm', target: 'node20', logLevel: 'warning', sourcemap: true,
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url); import { fileURLToPath as __fu } from 'node:url'; const __filename = __fu(import.meta.url); const __dirname = __fu(new URL('.', import.meta.url));" },
});
const { main } = await import(pathToFileURL(out).href);
try {
  process.exitCode = await main(argv, root);
} catch (err) {
  process.stderr.write(`bench:${name}: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
}
