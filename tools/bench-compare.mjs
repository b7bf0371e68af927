#!/usr/bin/env node
// npm run bench:compare [-- --scenarios ... --runs N --threads T --slots N --ctx N]
// Bundles the comparison (tools/bench-compare/compare-main.ts) with esbuild and runs it; with our
// server on the bench it first rebuilds dist/ so `strata serve` is the current code.
// tools/gpu-bundle.mjs imports bundleCompare() to ship the same bundle to a machine without esbuild;
// there `--prebuilt` runs the shipped dist/bench-compare.mjs and dist/ as they are.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Writes dist/bench-compare.mjs (in dist/ like the other bundles: the stand-in model maker finds the addon relative to it). */
export async function bundleCompare() {
  const out = join(root, 'dist', 'bench-compare.mjs');
  mkdirSync(dirname(out), { recursive: true });
  const { build } = await import('esbuild');
  await build({
    entryPoints: [join(root, 'tools', 'bench-compare', 'compare-main.ts')], outfile: out, bundle: true,
    platform: 'node', format: 'esm', target: 'node20', logLevel: 'warning', sourcemap: true,
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const prebuilt = process.argv.includes('--prebuilt');
  const argv = process.argv.slice(2).filter((a) => a !== '--prebuilt');
  const oursIndex = argv.indexOf('--ours');
  const ours = oursIndex >= 0 ? argv[oursIndex + 1] : 'strata';
  if (ours === 'strata' && !argv.includes('--help') && !prebuilt) {
    execFileSync(process.execPath, [join(root, 'scripts', 'bundle.mjs')], { stdio: 'inherit' });
  }
  const bundle = prebuilt ? join(root, 'dist', 'bench-compare.mjs') : await bundleCompare();
  const { main } = await import(pathToFileURL(bundle).href);
  try {
    process.exitCode = await main(argv, root);
  } catch (err) {
    process.stderr.write(`bench:compare: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
