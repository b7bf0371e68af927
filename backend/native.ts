// Loads the native addon once. STRATA_ADDON overrides its path (e.g. a GPU build).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Addon from '../native/lib/addon.js';

export type NativeAddon = typeof Addon;

/** Package root: the folder holding package.json, both from backend/ sources and from dist/. */
export const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

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
