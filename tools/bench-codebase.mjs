#!/usr/bin/env node
// npm run bench:codebase [-- options]: bundles tools/bench-codebase.ts with esbuild (after
// dist/, so `strata serve` is the current code) and runs it. --help lists the options.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
if (!argv.includes('--help')) execFileSync(process.execPath, [join(root, 'scripts', 'bundle.mjs')], { stdio: 'inherit' });
// In dist/ like the other bundles: the addon loader and node-sqlite3-wasm.wasm are found beside it.
const out = join(root, 'dist', 'bench-codebase.mjs');
await build({
  entryPoints: [join(root, 'tools', 'bench-codebase.ts')], outfile: out, bundle: true,
  platform: 'node', format: 'esm', target: 'node20', logLevel: 'warning', sourcemap: true,
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url); import { fileURLToPath as __fu } from 'node:url'; const __filename = __fu(import.meta.url); const __dirname = __fu(new URL('.', import.meta.url));" },
});
const { main } = await import(pathToFileURL(out).href);
try {
  process.exitCode = await main(argv, root);
} catch (err) {
  process.stderr.write(`bench:codebase: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
}
