#!/usr/bin/env node
// Packs VSIXes, one per platform, each holding only its own native engine (vsce package --target):
//
//   node scripts/package.mjs                      the host's platform -> strata-<version>.vsix
//   node scripts/package.mjs --target PLATFORM    linux-x64 | linux-arm64 | win32-x64 -> vsix/strata-<version>-PLATFORM.vsix
//   node scripts/package.mjs --all                every platform above (npm run package:all)
//
// The bundles in dist/ must be built first (npm run build; the npm scripts do it). A platform's
// engine comes from scripts/build-native.mjs (native/build/ for the host, native/build-PLATFORM/
// for a cross build), built first when missing. Each VSIX is packed from a staging folder
// (test-output/vsix/PLATFORM/) holding the files .vscodeignore lets in, with that platform's
// engine as native/build/: the extension's start-up check reads its build-manifest.json.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultOut, HOST_PLATFORM, PLATFORMS } from './build-native.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
/** Copied into the staging folder; .vscodeignore (copied too) picks from them as in the checkout. */
const STAGED = ['package.json', '.vscodeignore', 'README.md', 'CONTRIBUTING.md', 'LICENSE', 'docs', 'media', 'dist'];

function log(msg) { process.stderr.write(`[strata package] ${msg}\n`); }

function engineFor(platform) {
  const dir = defaultOut(platform);
  const manifest = join(dir, 'build-manifest.json');
  const builtFor = () => {
    try { return JSON.parse(readFileSync(manifest, 'utf8')).platform ?? HOST_PLATFORM; } catch { return null; }
  };
  if (builtFor() !== platform || !existsSync(join(dir, 'strata.node'))) {
    log(`building the native engine for ${platform}`);
    const args = [join(root, 'scripts', 'build-native.mjs'), ...(platform === HOST_PLATFORM ? [] : ['--platform', platform])];
    const r = spawnSync(process.execPath, args, { stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`the native build for ${platform} failed`);
  }
  if (builtFor() !== platform) throw new Error(`${manifest} is not a ${platform} build`);
  return dir;
}

/** Packs one platform's VSIX; returns its path. */
export function packagePlatform(platform, out) {
  if (!Object.hasOwn(PLATFORMS, platform)) throw new Error(`--target must be one of ${Object.keys(PLATFORMS).join(', ')}, got '${platform}'`);
  if (!existsSync(join(root, 'dist', 'extension.cjs'))) throw new Error('dist/ is not built: run npm run build first');
  const engine = engineFor(platform);
  const stage = join(root, 'test-output', 'vsix', platform);
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(join(stage, 'native'), { recursive: true });
  for (const f of STAGED) cpSync(join(root, f), join(stage, f), { recursive: true });
  cpSync(engine, join(stage, 'native', 'build'), { recursive: true });
  mkdirSync(dirname(out), { recursive: true });
  const vsce = join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
  const r = spawnSync(process.execPath, [vsce, 'package', '--target', platform, '--no-dependencies', '--allow-missing-repository',
    '--no-rewrite-relative-links', '-o', out], { cwd: stage, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`vsce package --target ${platform} failed`);
  log(`${platform}: ${out} (${(statSync(out).size / 1048576).toFixed(1)} MiB)`);
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const i = argv.indexOf('--target');
  try {
    if (argv.includes('--all')) {
      for (const p of Object.keys(PLATFORMS)) packagePlatform(p, join(root, 'vsix', `strata-${version}-${p}.vsix`));
    } else if (i >= 0) {
      const p = argv[i + 1];
      packagePlatform(p, join(root, 'vsix', `strata-${version}-${p}.vsix`));
    } else {
      packagePlatform(HOST_PLATFORM, join(root, `strata-${version}.vsix`));
    }
  } catch (err) {
    log(err.message);
    process.exit(1);
  }
}
