// Each VSIX holds the native engine of one platform (vsce package --target; the Marketplace gives
// each computer its own). A VSIX installed by hand on another computer would fail on its first
// model load with a loader error; instead the extension checks the platform its engine was built
// for (native/build/build-manifest.json) at start-up and, on a mismatch, starts nothing and says
// which package this computer needs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The platforms a Strata VSIX is built for, as vsce's --target names them. */
export const PLATFORM_LABELS: Record<string, string> = {
  'linux-x64': 'Linux on x86-64',
  'linux-arm64': 'Linux on 64-bit Arm',
  'win32-x64': 'Windows on x86-64',
  'darwin-arm64': 'macOS on Apple silicon',
};

/** Platforms with a package to install (macOS has a build recipe, not yet a tested package). */
export const PACKAGED_PLATFORMS = ['linux-x64', 'linux-arm64', 'win32-x64'];

export const runningPlatform = (): string => `${process.platform}-${process.arch}`;

const label = (p: string): string => PLATFORM_LABELS[p] ?? p;

/**
 * Null when the engine beside the extension is built for `running` (or says nothing: a build from
 * before the manifest named its platform); otherwise the message to show, naming the package to
 * install. Never throws: an unreadable manifest is left to the engine's own start-up errors.
 */
export function platformMismatch(extensionRoot: string, version: string, running = runningPlatform(),
  read: (path: string) => string = (p) => readFileSync(p, 'utf8')): string | null {
  let built: unknown;
  try {
    built = (JSON.parse(read(join(extensionRoot, 'native', 'build', 'build-manifest.json'))) as { platform?: unknown }).platform;
  } catch {
    return null;
  }
  if (typeof built !== 'string' || built === running) return null;
  const head = `Strata did not start: this package's engine is built for ${label(built)} (${built}), and this computer is ${label(running)} (${running}).`;
  if (!PACKAGED_PLATFORMS.includes(running)) {
    return `${head} There is no Strata package for ${label(running)} yet.`;
  }
  return `${head} Install the ${running} package instead: strata-${version}-${running}.vsix ` +
    `(\`code --install-extension strata-${version}-${running}.vsix\`; the Marketplace picks it by itself).`;
}
