#!/usr/bin/env node
// node tools/run-bench-script.mjs NAME [options]: bundles tools/bench-NAME.ts with esbuild
// (after dist/, so `strata serve` is the current code) and runs its main(argv, root). Used by the
// bench:* commands whose benchmark drives extension code (the agent loop, the client) against
// real servers. --help lists a benchmark's options.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [name, ...argv] = process.argv.slice(2);
const entry = join(root, 'tools', `bench-${name ?? ''}.ts`);
if (!name || !/^[a-z-]+$/.test(name) || !existsSync(entry)) {
  process.stderr.write(`usage: node tools/run-bench-script.mjs NAME [options] (tools/bench-NAME.ts; got '${name ?? ''}')\n`);
  process.exit(2);
}
if (!argv.includes('--help')) execFileSync(process.execPath, [join(root, 'scripts', 'bundle.mjs')], { stdio: 'inherit' });
// In dist/ like the other bundles: the stand-in model maker finds the addon relative to it.
const out = join(root, 'dist', `bench-${name}.mjs`);
await build({
  entryPoints: [entry], outfile: out, bundle: true,
  platform: 'node', format: 'esm', target: 'node20', logLevel: 'warning', sourcemap: true,
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
});
const { main } = await import(pathToFileURL(out).href);
try {
  process.exitCode = await main(argv, root);
} catch (err) {
  process.stderr.write(`bench:${name}: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
}
