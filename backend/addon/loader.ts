// Loads the native addon once. STRATA_ADDON overrides its path (e.g. a GPU build).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Addon from '../../native/lib/addon.js';

export type NativeAddon = typeof Addon;

/**
 * Package root: the nearest folder above this module holding our package.json. The same code
 * runs from backend/addon/ (sources, tests) and bundled into dist/, at different depths.
 */
export const packageRoot = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'strata-vscode') return dir;
    if (dirname(dir) === dir) return resolve(from, '..');
  }
}

let cached: NativeAddon | null = null;

export function addonPath(): string {
  return process.env.STRATA_ADDON ?? join(packageRoot, 'native', 'build', 'strata.node');
}

export function loadAddon(): NativeAddon {
  if (cached) return cached;
  const path = addonPath();
  if (!existsSync(path)) {
    throw new Error(`native engine not built: ${path} is missing (run \`npm install\` or \`node scripts/build-native.mjs\`)`);
  }
  cached = createRequire(import.meta.url)(path) as NativeAddon;
  return cached;
}
