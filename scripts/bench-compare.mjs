#!/usr/bin/env node
// npm run bench:compare [-- --scenarios ... --runs N --threads T --slots N --ctx N]
// Bundles the comparison (backend/bench-compare/compare-main.ts) with esbuild and runs it; with our
// server on the bench it first rebuilds dist/ so `strata serve` is the current code.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const oursIndex = argv.indexOf('--ours');
const ours = oursIndex >= 0 ? argv[oursIndex + 1] : 'strata';

if (ours === 'strata' && !argv.includes('--help')) {
  execFileSync(process.execPath, [join(root, 'scripts', 'bundle.mjs')], { stdio: 'inherit' });
}
// In dist/ like the other bundles: the stand-in model maker finds the addon relative to it.
const out = join(root, 'dist', 'bench-compare.mjs');
mkdirSync(dirname(out), { recursive: true });
await build({
  entryPoints: [join(root, 'backend', 'bench-compare', 'compare-main.ts')], outfile: out, bundle: true,
  platform: 'node', format: 'esm', target: 'node20', logLevel: 'warning', sourcemap: true,
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
});
const { main } = await import(pathToFileURL(out).href);
try {
  process.exitCode = await main(argv, root);
} catch (err) {
  process.stderr.write(`bench:compare: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
