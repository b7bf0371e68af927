// The start-up check of a platform VSIX: the engine's build manifest names its platform, and the
// extension starts only on that platform, else names the package this computer needs.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { platformMismatch } from '../../extension/platform/check.js';

const dirs: string[] = [];
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

/** An installed extension folder whose native/build/build-manifest.json holds `manifest` (text as given). */
function extensionWith(manifest: string | null): string {
  const root = mkdtempSync(join(tmpdir(), 'strata-platform-'));
  dirs.push(root);
  mkdirSync(join(root, 'native', 'build'), { recursive: true });
  if (manifest !== null) writeFileSync(join(root, 'native', 'build', 'build-manifest.json'), manifest);
  return root;
}

const built = (platform: string): string => JSON.stringify({ llamaCommit: 'x', platform, files: [] });

describe('platformMismatch', () => {
  it('lets the extension start where its engine was built for', () => {
    for (const p of ['linux-x64', 'linux-arm64', 'win32-x64']) expect(platformMismatch(extensionWith(built(p)), '0.1.0', p)).toBeNull();
  });

  it('names both platforms and the package to install when they differ', () => {
    const msg = platformMismatch(extensionWith(built('linux-arm64')), '0.1.0', 'linux-x64');
    expect(msg).toContain('built for Linux on 64-bit Arm (linux-arm64)');
    expect(msg).toContain('this computer is Linux on x86-64 (linux-x64)');
    expect(msg).toContain('strata-0.1.0-linux-x64.vsix');
    const win = platformMismatch(extensionWith(built('linux-x64')), '0.2.0', 'win32-x64');
    expect(win).toContain('strata-0.2.0-win32-x64.vsix');
  });

  it('says there is no package yet on a platform without one, naming no file to install', () => {
    const msg = platformMismatch(extensionWith(built('linux-x64')), '0.1.0', 'darwin-arm64');
    expect(msg).toContain('no Strata package for macOS on Apple silicon yet');
    expect(msg).not.toContain('.vsix');
  });

  it('has no opinion, and does not throw, without a readable manifest naming a platform', () => {
    expect(platformMismatch(extensionWith(null), '0.1.0', 'linux-x64')).toBeNull();
    expect(platformMismatch(extensionWith('{ not json'), '0.1.0', 'linux-x64')).toBeNull();
    expect(platformMismatch(extensionWith(JSON.stringify({ files: [] })), '0.1.0', 'linux-x64')).toBeNull();
    expect(platformMismatch(extensionWith(JSON.stringify({ platform: 42 })), '0.1.0', 'linux-x64')).toBeNull();
  });
});
